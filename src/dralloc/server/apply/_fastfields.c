/* The optional C walk of what a create adds to managedFields (dralloc.server.apply._fastfields).
 *
 * created_new(default_struct, list_fields, value, node) returns the fieldsV1 tree that a value owns when
 * nothing was there before and nothing below it is left out: exactly what fieldsets.created_new_python
 * returns for the same arguments, keys in the same order. A struct (a dict the schema does not call atomic)
 * owns itself ("." first) and each of its fields, by name, with the fields its schema node always carries
 * (``always``) added; a scalar, an atomic value, an empty dict or list owns nothing below it ({}); a
 * non-empty associative list or set is handed to ``list_fields(value, node)`` (Python: its items' keys are
 * Go-escaped JSON, sorted by their values), which returns its tree or None. The schema nodes are
 * fieldtypes.FieldType objects, read through their attributes; ``default_struct`` is the node of an
 * undeclared field. No state outside the arguments; the GIL is held throughout. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject *default_struct;
    PyObject *list_fields;
} Walk;

/* interned attribute names and the node kinds (set once in the module's init, never changed) */
static PyObject *str_kind, *str_fields, *str_always, *str_values, *str_dot, *str_atomic, *str_list_map,
    *str_set, *str_prefix, *str_item, *str_sorted_keys, *str_key_defaults;

static PyObject *created_value(Walk *walk, PyObject *value, PyObject *node);

/* node.child(name): the declared field's node, else the map's value node, else the default struct */
static PyObject *child_node(Walk *walk, PyObject *fields, PyObject *values, PyObject *name)
{
    if (fields != NULL) {
        PyObject *found = PyDict_GetItemWithError(fields, name);
        if (found != NULL)
            return Py_NewRef(found);
        if (PyErr_Occurred())
            return NULL;
    }
    if (values != NULL && values != Py_None)
        return Py_NewRef(values);
    return Py_NewRef(walk->default_struct);
}

/* mapping[key] as a new reference; NULL without an error when the key is not there (a dict, or any mapping
 * such as the read-only trees of what is never owned) */
static PyObject *lookup(PyObject *mapping, PyObject *key)
{
    if (PyDict_Check(mapping))
        return Py_XNewRef(PyDict_GetItemWithError(mapping, key));
    PyObject *found = PyObject_GetItem(mapping, key);
    if (found == NULL && PyErr_ExceptionMatches(PyExc_KeyError))
        PyErr_Clear();
    return found;
}

static int kind_is(PyObject *kind, PyObject *name)
{
    return kind == name || (PyUnicode_Check(kind) && PyUnicode_Compare(kind, name) == 0);
}

/* A key value as JSON in a path element, when it is one the walk writes here: an int, or a string of printable
 * ASCII that neither JSON nor Go escapes. NULL without an error for any other value (Python writes it); *order
 * is structured-merge-diff's rank of the value (numbers before strings). */
static PyObject *plain_json(PyObject *value, int *order)
{
    if (PyLong_CheckExact(value)) {
        *order = 0;
        return PyObject_Str(value);
    }
    if (!PyUnicode_CheckExact(value) || PyUnicode_KIND(value) != PyUnicode_1BYTE_KIND)
        return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(value);
    const Py_UCS1 *chars = PyUnicode_1BYTE_DATA(value);
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS1 c = chars[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&')
            return NULL;
    }
    *order = 1;
    return PyUnicode_FromFormat("\"%U\"", value);
}

/* What the list's items are in the walk's order: (rank, index, path element, item) tuples sorted as
 * fieldsv1.item_order sorts them (stable: equal keys keep the list's order). NULL without an error when an
 * item is not one the walk keys here (Python keys the list). */
static PyObject *keyed_sorted(PyObject *list, PyObject *node, int is_set)
{
    PyObject *sorted_keys = NULL, *defaults = NULL, *out = NULL;
    if (!is_set) {
        sorted_keys = PyObject_GetAttr(node, str_sorted_keys);
        defaults = sorted_keys != NULL ? PyObject_GetAttr(node, str_key_defaults) : NULL;
        if (defaults == NULL)
            goto failed;
        if (!PyTuple_Check(sorted_keys) || !PyDict_Check(defaults)) {
            Py_CLEAR(sorted_keys);
            Py_CLEAR(defaults);
            return NULL;
        }
    }
    Py_ssize_t count = PyList_GET_SIZE(list);
    out = PyList_New(count);
    if (out == NULL)
        goto failed;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(list, i), *rank = NULL, *element = NULL;
        int order;
        if (is_set) {
            PyObject *json = plain_json(item, &order);
            if (json == NULL)
                goto unkeyed;
            element = PyUnicode_FromFormat("v:%U", json);
            rank = element != NULL ? Py_BuildValue("(iO)", order, item) : NULL;
            Py_DECREF(json);
        } else {
            if (!PyDict_Check(item))
                goto unkeyed;
            Py_ssize_t keys = PyTuple_GET_SIZE(sorted_keys);
            PyObject *text = PyUnicode_FromString("k:{");
            rank = PyList_New(0);
            int parts = 0;
            for (Py_ssize_t k = 0; text != NULL && rank != NULL && k < keys; k++) {
                PyObject *name = PyTuple_GET_ITEM(sorted_keys, k);
                PyObject *key_value = PyDict_GetItemWithError(item, name);
                if (key_value == NULL && !PyErr_Occurred())
                    key_value = PyDict_GetItemWithError(defaults, name);
                if (key_value == NULL) {
                    if (PyErr_Occurred())
                        Py_CLEAR(text);
                    continue;
                }
                PyObject *json = plain_json(key_value, &order);
                if (json == NULL) {
                    Py_XDECREF(text);
                    Py_XDECREF(rank);
                    goto unkeyed;
                }
                PyObject *more = PyUnicode_FromFormat(parts ? "%U,\"%U\":%U" : "%U\"%U\":%U", text, name, json);
                PyObject *pair = Py_BuildValue("(O(iO))", name, order, key_value);
                Py_DECREF(json);
                Py_SETREF(text, more);
                if (pair == NULL || PyList_Append(rank, pair) < 0)
                    Py_CLEAR(text);
                Py_XDECREF(pair);
                parts++;
            }
            if (text != NULL && parts == 0) {  /* no key at all: Python says so (the list is owned whole) */
                Py_DECREF(text);
                Py_XDECREF(rank);
                goto unkeyed;
            }
            element = text != NULL ? PyUnicode_FromFormat("%U}", text) : NULL;
            Py_XDECREF(text);
        }
        PyObject *index = element != NULL && rank != NULL ? PyLong_FromSsize_t(i) : NULL;
        PyObject *entry = index != NULL ? PyTuple_Pack(4, rank, index, element, item) : NULL;
        Py_XDECREF(index);
        Py_XDECREF(rank);
        Py_XDECREF(element);
        if (entry == NULL)
            goto failed;
        PyList_SET_ITEM(out, i, entry);
    }
    Py_XDECREF(sorted_keys);
    Py_XDECREF(defaults);
    if (PyList_Sort(out) < 0)
        Py_CLEAR(out);
    return out;
unkeyed:
    if (PyErr_Occurred())
        goto failed;
    Py_XDECREF(sorted_keys);
    Py_XDECREF(defaults);
    Py_XDECREF(out);
    return NULL;
failed:
    Py_XDECREF(sorted_keys);
    Py_XDECREF(defaults);
    Py_XDECREF(out);
    return NULL;
}

/* The tree of a non-empty associative list or set whose items are all new ("." first when the list is new too):
 * each item by its key in item_order, a duplicated key owned with nothing below it. Py_None: Python keys it. */
static PyObject *created_list(Walk *walk, PyObject *list, PyObject *node, int is_set, int new_list)
{
    PyObject *entries = keyed_sorted(list, node, is_set);
    if (entries == NULL)
        return PyErr_Occurred() ? NULL : PyObject_CallFunctionObjArgs(walk->list_fields, list, node,
                                                                      new_list ? Py_True : Py_False, NULL);
    PyObject *item_node = NULL, *seen = NULL, *duplicates = NULL, *tree = NULL;
    Py_ssize_t count = PyList_GET_SIZE(entries);
    item_node = PyObject_GetAttr(node, str_item);
    seen = PySet_New(NULL);
    duplicates = PySet_New(NULL);
    tree = PyDict_New();
    if (item_node == NULL || seen == NULL || duplicates == NULL || tree == NULL)
        goto failed;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *element = PyTuple_GET_ITEM(PyList_GET_ITEM(entries, i), 2);
        int found = PySet_Contains(seen, element);
        if (found < 0 || PySet_Add(found ? duplicates : seen, element) < 0)
            goto failed;
    }
    if (new_list) {
        PyObject *self = PyDict_New();
        int failed = self == NULL || PyDict_SetItem(tree, str_dot, self) < 0;
        Py_XDECREF(self);
        if (failed)
            goto failed;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *entry = PyList_GET_ITEM(entries, i);
        PyObject *element = PyTuple_GET_ITEM(entry, 2), *item = PyTuple_GET_ITEM(entry, 3);
        int there = PyDict_Contains(tree, element);
        if (there < 0)
            goto failed;
        if (there)  /* a duplicated item is owned once, nothing below it */
            continue;
        int duplicated = PySet_Contains(duplicates, element);
        if (duplicated < 0)
            goto failed;
        PyObject *sub = duplicated || item_node == Py_None ? PyDict_New() : created_value(walk, item, item_node);
        int failed = sub == NULL || PyDict_SetItem(tree, element, sub) < 0;
        Py_XDECREF(sub);
        if (failed)
            goto failed;
    }
    Py_DECREF(entries);
    Py_DECREF(item_node);
    Py_DECREF(seen);
    Py_DECREF(duplicates);
    return tree;
failed:
    Py_XDECREF(entries);
    Py_XDECREF(item_node);
    Py_XDECREF(seen);
    Py_XDECREF(duplicates);
    Py_XDECREF(tree);
    return NULL;
}

static PyObject *created_value_over(Walk *walk, PyObject *value, PyObject *node, PyObject *before,
                                    PyObject *skip);

/* The fields of a dict whose node is not atomic, by name: with "." first when nothing was before (``before``
 * NULL); over ``before`` (a dict: what the kind's empty object holds there) a field that was there with the
 * same value is left out; ``skip`` (NULL: none) maps a field's path element to True (never owned) or to what
 * is never owned below it. */
static PyObject *created_struct(Walk *walk, PyObject *obj, PyObject *node, PyObject *before, PyObject *skip)
{
    PyObject *fields = NULL, *always = NULL, *values = NULL, *names = NULL, *out = NULL;
    fields = PyObject_GetAttr(node, str_fields);
    if (fields == NULL)
        goto done;
    if (!PyDict_Check(fields)) {  /* (a Mapping that is not a dict: left to Python) */
        PyErr_SetString(PyExc_TypeError, "a schema node's fields must be a dict");
        goto done;
    }
    always = PyObject_GetAttr(node, str_always);
    if (always == NULL)
        goto done;
    if (!PyDict_Check(always)) {
        PyErr_SetString(PyExc_TypeError, "a schema node's always must be a dict");
        goto done;
    }
    values = PyObject_GetAttr(node, str_values);
    if (values == NULL)
        goto done;
    names = PyDict_Keys(obj);
    if (names == NULL)
        goto done;
    if (before == NULL && PyDict_GET_SIZE(always)) {
        PyObject *name, *unused;
        Py_ssize_t pos = 0;
        while (PyDict_Next(always, &pos, &name, &unused)) {
            int present = PyDict_Contains(obj, name);
            if (present < 0 || (!present && PyList_Append(names, name) < 0))
                goto done;
        }
    }
    if (PyList_Sort(names) < 0)
        goto done;
    out = PyDict_New();
    if (out == NULL)
        goto done;
    if (before == NULL) {
        PyObject *self = PyDict_New();
        if (self == NULL || PyDict_SetItem(out, str_dot, self) < 0) {
            Py_XDECREF(self);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(self);
    }
    Py_ssize_t count = PyList_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "a field name must be a string");
            Py_CLEAR(out);
            goto done;
        }
        PyObject *value = PyDict_GetItemWithError(obj, name);  /* borrowed */
        if (value == NULL) {
            if (PyErr_Occurred() || (value = PyDict_GetItemWithError(always, name)) == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_KeyError, "a field vanished during the walk");
                Py_CLEAR(out);
                goto done;
            }
        }
        PyObject *element = PyUnicode_Concat(str_prefix, name);
        if (element == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyObject *inner = NULL;  /* what is never owned below the field (NULL: nothing; a new reference) */
        if (skip != NULL) {
            inner = lookup(skip, element);
            if (inner == NULL && PyErr_Occurred()) {
                Py_DECREF(element);
                Py_CLEAR(out);
                goto done;
            }
            if (inner == Py_True) {  /* never owned */
                Py_DECREF(inner);
                Py_DECREF(element);
                continue;
            }
            if (inner == Py_None)
                Py_CLEAR(inner);
        }
        PyObject *was = NULL;  /* what the empty object holds there (NULL: nothing) */
        if (before != NULL) {
            was = PyDict_GetItemWithError(before, name);
            if (was == NULL && PyErr_Occurred()) {
                Py_XDECREF(inner);
                Py_DECREF(element);
                Py_CLEAR(out);
                goto done;
            }
        }
        PyObject *sub;
        if (was == NULL && inner == NULL && !PyDict_Check(value) && !PyList_Check(value)) {
            sub = PyDict_New();  /* a new scalar (most fields): a leaf */
        } else {
            PyObject *child = child_node(walk, fields, values, name);
            if (child == NULL) {
                Py_XDECREF(inner);
                Py_DECREF(element);
                Py_CLEAR(out);
                goto done;
            }
            if (was == NULL && inner == NULL) {
                sub = created_value(walk, value, child);
            } else if (was == NULL) {  /* stripped as a member (metadata): never owned itself */
                PyObject *empty = PyDict_New();
                sub = empty == NULL ? NULL : created_value_over(walk, value, child, empty, inner);
                Py_XDECREF(empty);
            } else {
                sub = created_value_over(walk, value, child, was, inner);
            }
            Py_DECREF(child);
        }
        Py_XDECREF(inner);
        int failed = sub == NULL || (sub != Py_None && PyDict_SetItem(out, element, sub) < 0);
        Py_DECREF(element);
        Py_XDECREF(sub);
        if (failed) {
            Py_CLEAR(out);
            goto done;
        }
    }
done:
    Py_XDECREF(fields);
    Py_XDECREF(always);
    Py_XDECREF(values);
    Py_XDECREF(names);
    return out;
}

static PyObject *created_value(Walk *walk, PyObject *value, PyObject *node)
{
    int is_dict = PyDict_Check(value), is_list = !is_dict && PyList_Check(value);
    if (!(is_dict ? PyDict_GET_SIZE(value) : is_list ? PyList_GET_SIZE(value) : 0))
        return PyDict_New();  /* a scalar, {} or []: owned, nothing below it */
    PyObject *kind = PyObject_GetAttr(node, str_kind);
    if (kind == NULL)
        return NULL;
    PyObject *out;
    if (kind_is(kind, str_atomic)) {
        out = PyDict_New();
    } else if (is_dict) {
        if (Py_EnterRecursiveCall(" in the managedFields walk")) {
            Py_DECREF(kind);
            return NULL;
        }
        out = created_struct(walk, value, node, NULL, NULL);
        Py_LeaveRecursiveCall();
        if (out != NULL && PyDict_GET_SIZE(out) <= 1) {  /* (nothing below: owned as a leaf) */
            Py_DECREF(out);
            out = PyDict_New();
        }
    } else if (kind_is(kind, str_list_map) || kind_is(kind, str_set)) {
        out = created_list(walk, value, node, kind_is(kind, str_set), 1);
        if (out == Py_None) {
            Py_DECREF(out);
            out = PyDict_New();
        }
    } else {
        out = PyDict_New();  /* an atomic list */
    }
    Py_DECREF(kind);
    return out;
}

/* What a value owns over ``before`` (what the kind's empty object holds there; not NULL), with ``skip`` (NULL:
 * nothing) never owned below it: a tree, or None when it owns nothing (the same value as before). */
static PyObject *created_value_over(Walk *walk, PyObject *value, PyObject *node, PyObject *before,
                                    PyObject *skip)
{
    PyObject *kind = PyObject_GetAttr(node, str_kind);
    if (kind == NULL)
        return NULL;
    int atomic = kind_is(kind, str_atomic), is_set = kind_is(kind, str_set);
    int granular_list = !atomic && (is_set || kind_is(kind, str_list_map));
    Py_DECREF(kind);
    if (!atomic) {
        int truthy = PyObject_IsTrue(value);
        if (truthy < 0)
            return NULL;
        if (truthy && PyDict_Check(value) && PyDict_Check(before)) {
            if (Py_EnterRecursiveCall(" in the managedFields walk"))
                return NULL;
            PyObject *out = created_struct(walk, value, node, before, skip);
            Py_LeaveRecursiveCall();
            if (out != NULL && PyDict_GET_SIZE(out) == 0) {
                Py_DECREF(out);
                Py_RETURN_NONE;
            }
            return out;
        }
        if (truthy && PyList_Check(value) && granular_list && PyList_Check(before) && PyList_GET_SIZE(before) == 0) {
            PyObject *tree = created_list(walk, value, node, is_set, 0);
            if (tree != Py_None)
                return tree;
            Py_DECREF(tree);
        }
    }
    if (Py_TYPE(before) == Py_TYPE(value)) {
        int same = PyObject_RichCompareBool(before, value, Py_EQ);
        if (same < 0)
            return NULL;
        if (same)
            Py_RETURN_NONE;
    }
    return PyDict_New();
}

static PyObject *created_new(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "created_new(default_struct, list_fields, value, node)");
        return NULL;
    }
    Walk walk = {args[0], args[1]};
    return created_value(&walk, args[2], args[3]);
}

static PyObject *created_fields(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "created_fields(default_struct, list_fields, obj, node, before, skip)");
        return NULL;
    }
    if (!PyDict_Check(args[2]) || !PyDict_Check(args[4]) || !PyMapping_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "created_fields takes dicts and a mapping of what is never owned");
        return NULL;
    }
    Walk walk = {args[0], args[1]};
    return created_struct(&walk, args[2], args[3], args[4], args[5]);
}

static PyMethodDef module_methods[] = {
    {"created_fields", (PyCFunction)(void (*)(void))created_fields, METH_FASTCALL,
     "created_fields(default_struct, list_fields, obj, node, before, skip): the fieldsV1 tree of a create."},
    {"created_new", (PyCFunction)(void (*)(void))created_new, METH_FASTCALL,
     "created_new(default_struct, list_fields, value, node): the fieldsV1 tree a new value owns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fastfields_module = {
    PyModuleDef_HEAD_INIT,
    .m_methods = module_methods,
    .m_name = "_fastfields",
    .m_doc = "The optional C walk of a create's managedFields (see dralloc.server.apply.fieldsets).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__fastfields(void)
{
    if ((str_kind = PyUnicode_InternFromString("kind")) == NULL
        || (str_fields = PyUnicode_InternFromString("fields")) == NULL
        || (str_always = PyUnicode_InternFromString("always")) == NULL
        || (str_values = PyUnicode_InternFromString("values")) == NULL
        || (str_dot = PyUnicode_InternFromString(".")) == NULL
        || (str_atomic = PyUnicode_InternFromString("atomic")) == NULL
        || (str_list_map = PyUnicode_InternFromString("list-map")) == NULL
        || (str_set = PyUnicode_InternFromString("set")) == NULL
        || (str_prefix = PyUnicode_InternFromString("f:")) == NULL
        || (str_item = PyUnicode_InternFromString("item")) == NULL
        || (str_sorted_keys = PyUnicode_InternFromString("sorted_keys")) == NULL
        || (str_key_defaults = PyUnicode_InternFromString("key_defaults")) == NULL)
        return NULL;
    return PyModule_Create(&fastfields_module);
}
