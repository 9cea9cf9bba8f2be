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
    *str_set, *str_prefix;

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
        out = PyObject_CallFunctionObjArgs(walk->list_fields, value, node, NULL);
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
    int atomic = kind_is(kind, str_atomic);
    int granular_list = !atomic && (kind_is(kind, str_list_map) || kind_is(kind, str_set));
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
            PyObject *tree = PyObject_CallFunctionObjArgs(walk->list_fields, value, node, Py_False, NULL);
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
        || (str_prefix = PyUnicode_InternFromString("f:")) == NULL)
        return NULL;
    return PyModule_Create(&fastfields_module);
}
