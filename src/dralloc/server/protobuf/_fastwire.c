/* The optional C reader of protobuf bodies (dralloc.server.protobuf._fastwire).
 *
 * Table-driven: a Tables object is built once per schema table from the compiled plans (plans.py), handed
 * over by accelerated.py, and is immutable afterwards. It reads a message as Go writes it and returns
 * exactly the object the Python walker (walker.py) returns for the same bytes, keys in the Go struct's
 * order; for anything else -- an unknown field, a wrong wire type, a field that is not a list or a map
 * given twice, a truncation, invalid UTF-8, a map entry or a special message in an unusual form, nesting
 * deeper than the limit, a time RFC 3339 cannot hold -- it returns None, and the Python path reads the body
 * again (the walker names the field of an error). The embedded JSON of a RawExtension or a FieldsV1 is
 * handed to the Python function that reads it. No state outside the Tables object; the GIL is held
 * throughout. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <limits.h>
#include <string.h>

/* shapes of a field (what accelerated.py sends for each plan code) */
enum { SHAPE_SCALAR, SHAPE_MESSAGE, SHAPE_INLINE, SHAPE_REPEATED, SHAPE_MAP, SHAPE_PACKED };
/* kinds of a value */
enum { KIND_STRING, KIND_BYTES, KIND_BOOL, KIND_INT32, KIND_INT64, KIND_QUANTITY, KIND_TIME, KIND_MICROTIME,
       KIND_INT_OR_STRING, KIND_RAW_EXTENSION, KIND_FIELDS_V1, KIND_MESSAGE, KIND_UNSUPPORTED };

#define STACK_SLOTS 48        /* fields of a message whose values are collected on the C stack */
#define MAX_FIELD_NUMBER 4096 /* a larger field number in a table: that message is left to Python */

/* the seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the times RFC 3339 text can hold */
#define FIRST_SECOND (-62135596800LL)
#define LAST_SECOND 253402300799LL

typedef struct {
    PyObject *name;  /* the JSON name (NULL for an inline message) */
    PyObject *zero;  /* a map entry's value when the entry has none (NULL: a new dict) */
    int number, wire, shape, kind, message, keep_zero;
} FieldSpec;

typedef struct {
    Py_ssize_t count;    /* fields, in the Go struct's order (the order of the object's keys) */
    FieldSpec *fields;
    int max_number;
    short *slot_of;      /* field number -> slot, -1 for none (max_number + 1 entries) */
} MessageSpec;

typedef struct {
    PyObject_HEAD
    Py_ssize_t count;
    MessageSpec *messages;
    PyObject *raw_json;  /* forms._raw_json(raw bytes, kind name) */
    PyObject *raw_extension_name, *fields_v1_name, *api_version_key, *kind_key, *metadata_key;
    int max_depth;
} Tables;

static PyTypeObject TablesType;

/* ---- the wire ------------------------------------------------------------------------------------------- */

static inline int read_varint(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t end, uint64_t *out)
{
    Py_ssize_t at = *pos;
    if (at < end && buf[at] < 0x80) {
        *out = buf[at];
        *pos = at + 1;
        return 0;
    }
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {  /* Go keeps the low 64 bits of a tenth byte */
        if (at >= end)
            return -1;
        unsigned char byte = buf[at++];
        value |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = value;
            *pos = at;
            return 0;
        }
    }
    return -1;  /* longer than ten bytes */
}

/* a length-delimited value's start and size; -1 when its size goes past end */
static inline int read_sized(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t *size)
{
    uint64_t value;
    if (read_varint(buf, pos, end, &value) < 0 || value > (uint64_t)(end - *pos))
        return -1;
    *size = (Py_ssize_t)value;
    return 0;
}

static PyObject *varint_value(int kind, uint64_t value)
{
    switch (kind) {
    case KIND_BOOL:
        return PyBool_FromLong(value != 0);
    case KIND_INT32:
        return PyLong_FromLong((int32_t)(uint32_t)value);
    case KIND_INT64:
        return PyLong_FromLongLong((long long)value);
    }
    return NULL;
}

static PyObject *text(const unsigned char *buf, Py_ssize_t start, Py_ssize_t size)
{
    return PyUnicode_DecodeUTF8((const char *)buf + start, size, NULL);
}

static PyObject *base64_text(const unsigned char *buf, Py_ssize_t start, Py_ssize_t size)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (size > PY_SSIZE_T_MAX / 4 * 3 - 3)
        return PyErr_NoMemory();
    PyObject *out = PyUnicode_New((size + 2) / 3 * 4, 127);
    if (out == NULL)
        return NULL;
    Py_UCS1 *to = PyUnicode_1BYTE_DATA(out);
    const unsigned char *from = buf + start;
    Py_ssize_t i = 0;
    for (; i + 2 < size; i += 3) {
        uint32_t triple = (uint32_t)from[i] << 16 | (uint32_t)from[i + 1] << 8 | from[i + 2];
        *to++ = alphabet[triple >> 18 & 63];
        *to++ = alphabet[triple >> 12 & 63];
        *to++ = alphabet[triple >> 6 & 63];
        *to++ = alphabet[triple & 63];
    }
    if (i < size) {
        uint32_t triple = (uint32_t)from[i] << 16 | (i + 1 < size ? (uint32_t)from[i + 1] << 8 : 0);
        *to++ = alphabet[triple >> 18 & 63];
        *to++ = alphabet[triple >> 12 & 63];
        *to++ = i + 1 < size ? alphabet[triple >> 6 & 63] : '=';
        *to++ = '=';
    }
    return out;
}

/* ---- the messages with JSON forms of their own (forms.py) ----------------------------------------------- */

/* a Quantity {1: text}: its text ("0" when empty); NULL for any other form */
static PyObject *quantity(const unsigned char *buf, Py_ssize_t start, Py_ssize_t end)
{
    if (start == end)
        return PyUnicode_FromString("0");
    Py_ssize_t pos = start + 1, size;
    if (buf[start] != 0x0A || read_sized(buf, &pos, end, &size) < 0 || pos + size != end)
        return NULL;
    return text(buf, pos, size);
}

static inline void two_digits(char *to, int value)
{
    to[0] = (char)('0' + value / 10);
    to[1] = (char)('0' + value % 10);
}

/* a Time or MicroTime {1: seconds, 2: nanos} as RFC 3339 text in UTC (a Time in whole seconds, a MicroTime
 * with six fraction digits, truncated); Py_None for an empty one (JSON's null); NULL for another form or a
 * time out of range */
static PyObject *rfc3339(const unsigned char *buf, Py_ssize_t start, Py_ssize_t end, int micro)
{
    if (start == end)
        Py_RETURN_NONE;
    Py_ssize_t pos = start;
    uint64_t raw_seconds = 0, raw_nanos = 0;
    if (buf[pos] == 0x08) {
        pos++;
        if (read_varint(buf, &pos, end, &raw_seconds) < 0)
            return NULL;
    }
    if (pos < end && buf[pos] == 0x10) {
        pos++;
        if (read_varint(buf, &pos, end, &raw_nanos) < 0)
            return NULL;
    }
    if (pos != end)
        return NULL;
    int64_t seconds = (int64_t)raw_seconds;
    int32_t nanos = (int32_t)(uint32_t)raw_nanos;
    int64_t micros = 0;
    if (seconds < FIRST_SECOND - 10 || seconds > LAST_SECOND + 10)
        return NULL;
    if (micro) {  /* toward zero, then a negative part borrows from the seconds (Go's time.Unix) */
        micros = nanos / 1000;
        int64_t carry = micros >= 0 ? micros / 1000000 : -((-micros + 999999) / 1000000);
        seconds += carry;
        micros -= carry * 1000000;
    }
    if (seconds < FIRST_SECOND || seconds > LAST_SECOND)
        return NULL;
    int64_t days = seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
    int64_t second = seconds - days * 86400;
    /* the civil date of a day count (days from 1970-01-01), in 400-year eras from 0000-03-01 */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t day_of_era = z - era * 146097;
    int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    int64_t month_index = (5 * day_of_year + 2) / 153;
    int day = (int)(day_of_year - (153 * month_index + 2) / 5 + 1);
    int month = (int)(month_index < 10 ? month_index + 3 : month_index - 9);
    int year = (int)(year_of_era + era * 400 + (month <= 2));
    char out[32];
    two_digits(out, year / 100);
    two_digits(out + 2, year % 100);
    out[4] = '-';
    two_digits(out + 5, month);
    out[7] = '-';
    two_digits(out + 8, day);
    out[10] = 'T';
    two_digits(out + 11, (int)(second / 3600));
    out[13] = ':';
    two_digits(out + 14, (int)(second / 60 % 60));
    out[16] = ':';
    two_digits(out + 17, (int)(second % 60));
    Py_ssize_t length = 19;
    if (micro) {
        out[length++] = '.';
        int rest = (int)micros;
        for (int i = 5; i >= 0; i--, rest /= 10)
            out[length + i] = (char)('0' + rest % 10);
        length += 6;
    }
    out[length++] = 'Z';
    return PyUnicode_DecodeASCII(out, length, NULL);
}

/* an IntOrString {1: type, 2: intVal, 3: strVal}, each at most once and in this order: its int (type 0) or
 * its string (type 1); NULL for another form or type */
static PyObject *int_or_string(const unsigned char *buf, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t pos = start, size = 0, text_at = -1;
    uint64_t type = 0, value = 0;
    if (pos < end && buf[pos] == 0x08 && (pos++, read_varint(buf, &pos, end, &type) < 0))
        return NULL;
    if (pos < end && buf[pos] == 0x10 && (pos++, read_varint(buf, &pos, end, &value) < 0))
        return NULL;
    if (pos < end && buf[pos] == 0x1A) {
        pos++;
        if (read_sized(buf, &pos, end, &size) < 0)
            return NULL;
        text_at = pos;
        pos += size;
    }
    if (pos != end || type > 1)
        return NULL;
    PyObject *string = text_at < 0 ? PyUnicode_FromStringAndSize("", 0) : text(buf, text_at, size);
    if (string == NULL || type == 1)
        return string;  /* (a string of an int's IntOrString is read too: invalid UTF-8 there is an error) */
    Py_DECREF(string);
    return PyLong_FromLong((int32_t)(uint32_t)value);
}

/* ---- messages ------------------------------------------------------------------------------------------- */

static int read_message(Tables *tables, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end, int index,
                        int depth, PyObject *out);

/* a length-delimited value of ``kind``: a new reference, Py_None where JSON has null (an empty time, a
 * RawExtension without JSON), NULL where the Python path must read the body */
static PyObject *delimited_value(Tables *tables, const FieldSpec *field, const unsigned char *buf,
                                 Py_ssize_t start, Py_ssize_t size, int depth)
{
    Py_ssize_t end = start + size;
    switch (field->kind) {
    case KIND_STRING:
        return text(buf, start, size);
    case KIND_BYTES:
        return base64_text(buf, start, size);
    case KIND_QUANTITY:
        return quantity(buf, start, end);
    case KIND_TIME:
    case KIND_MICROTIME:
        return rfc3339(buf, start, end, field->kind == KIND_MICROTIME);
    case KIND_INT_OR_STRING:
        return int_or_string(buf, start, end);
    case KIND_RAW_EXTENSION:
    case KIND_FIELDS_V1: {
        PyObject *raw = PyBytes_FromStringAndSize((const char *)buf + start, size);
        if (raw == NULL)
            return NULL;
        PyObject *args[2] = {raw, field->kind == KIND_FIELDS_V1 ? tables->fields_v1_name
                                                                  : tables->raw_extension_name};
        PyObject *value = PyObject_Vectorcall(tables->raw_json, args, 2, NULL);
        Py_DECREF(raw);
        return value;
    }
    case KIND_MESSAGE: {
        PyObject *value = PyDict_New();
        if (value != NULL && read_message(tables, buf, start, end, field->message, depth + 1, value) < 0)
            Py_CLEAR(value);
        return value;
    }
    }
    return NULL;
}

/* a map entry {1: key, 2: value} (the value may be absent) into ``entries``; -1 for any other form */
static int map_entry(Tables *tables, const FieldSpec *field, const unsigned char *buf, Py_ssize_t pos,
                     Py_ssize_t end, int depth, PyObject *entries)
{
    Py_ssize_t key_size, value_size;
    if (pos >= end || buf[pos] != 0x0A)
        return -1;
    pos++;
    if (read_sized(buf, &pos, end, &key_size) < 0)
        return -1;
    PyObject *key = text(buf, pos, key_size), *value;
    if (key == NULL)
        return -1;
    pos += key_size;
    if (pos == end) {
        value = field->zero == NULL ? PyDict_New() : Py_NewRef(field->zero);
    } else if (buf[pos] != 0x12 || (pos++, read_sized(buf, &pos, end, &value_size) < 0)
               || pos + value_size != end) {
        value = NULL;
    } else {
        value = delimited_value(tables, field, buf, pos, value_size, depth);
    }
    int failed = value == NULL || PyDict_SetItem(entries, key, value) < 0;
    Py_DECREF(key);
    Py_XDECREF(value);
    return failed ? -1 : 0;
}

/* the fields of message ``index`` in buf[pos:end], set in ``out`` in struct order; -1 where the Python
 * path must read the body */
static int read_message(Tables *tables, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end, int index,
                        int depth, PyObject *out)
{
    if (depth > tables->max_depth)
        return -1;
    const MessageSpec *message = &tables->messages[index];
    if (message->slot_of == NULL)
        return -1;
    PyObject *on_stack[STACK_SLOTS];
    char seen_on_stack[STACK_SLOTS];
    PyObject **values = on_stack;
    char *seen = seen_on_stack;
    if (message->count > STACK_SLOTS) {
        values = PyMem_Calloc((size_t)message->count, sizeof(PyObject *) + 1);
        if (values == NULL)
            return -1;
        seen = (char *)(values + message->count);
    } else {
        memset(on_stack, 0, sizeof(PyObject *) * (size_t)message->count);
        memset(seen_on_stack, 0, (size_t)message->count);
    }
    int result = -1;
    while (pos < end) {
        uint64_t key, number, scalar = 0;
        Py_ssize_t size = 0, at;
        if (read_varint(buf, &pos, end, &key) < 0)
            goto done;
        number = key >> 3;
        if (number > (uint64_t)message->max_number || message->slot_of[number] < 0)
            goto done;  /* an unknown field: the walker skips it, or finds a number 0 */
        int slot = message->slot_of[number];
        const FieldSpec *field = &message->fields[slot];
        int wire = (int)(key & 7);
        if (wire != field->wire && !(field->shape == SHAPE_PACKED && wire == 2))
            goto done;
        if (wire == 0) {
            if (read_varint(buf, &pos, end, &scalar) < 0)
                goto done;
        } else if (read_sized(buf, &pos, end, &size) < 0) {
            goto done;
        }
        at = pos;
        pos += size;
        PyObject *value;
        switch (field->shape) {
        case SHAPE_SCALAR:
        case SHAPE_MESSAGE:
        case SHAPE_INLINE:
            if (seen[slot])
                goto done;  /* given twice: the walker keeps the last or merges them */
            seen[slot] = 1;
            if (wire == 0) {  /* (an int32 is the low 32 bits: zero when those are) */
                if (!field->keep_zero && (field->kind == KIND_INT32 ? (uint32_t)scalar == 0 : scalar == 0))
                    break;
                value = varint_value(field->kind, scalar);
            } else if (field->kind == KIND_STRING || field->kind == KIND_BYTES) {
                if (size == 0 && !field->keep_zero)
                    break;
                value = delimited_value(tables, field, buf, at, size, depth);
            } else {
                value = delimited_value(tables, field, buf, at, size, depth);
                if (value == Py_None) {
                    Py_DECREF(value);
                    break;
                }
            }
            if (value == NULL)
                goto done;
            values[slot] = value;
            break;
        case SHAPE_REPEATED:
        case SHAPE_PACKED:
            if (values[slot] == NULL && (values[slot] = PyList_New(0)) == NULL)
                goto done;
            if (wire == 2 && field->shape == SHAPE_PACKED) {
                for (Py_ssize_t run = at; run < at + size;) {
                    if (read_varint(buf, &run, at + size, &scalar) < 0)
                        goto done;
                    value = varint_value(field->kind, scalar);
                    if (value == NULL || PyList_Append(values[slot], value) < 0) {
                        Py_XDECREF(value);
                        goto done;
                    }
                    Py_DECREF(value);
                }
                break;
            }
            value = wire == 0 ? varint_value(field->kind, scalar)
                              : delimited_value(tables, field, buf, at, size, depth);
            if (value == NULL || PyList_Append(values[slot], value) < 0) {
                Py_XDECREF(value);
                goto done;
            }
            Py_DECREF(value);
            break;
        case SHAPE_MAP:
            if (values[slot] == NULL && (values[slot] = PyDict_New()) == NULL)
                goto done;
            if (map_entry(tables, field, buf, at, at + size, depth, values[slot]) < 0)
                goto done;
            break;
        default:
            goto done;
        }
    }
    for (Py_ssize_t slot = 0; slot < message->count; slot++) {
        PyObject *value = values[slot];
        if (value == NULL)
            continue;
        const FieldSpec *field = &message->fields[slot];
        if (field->shape == SHAPE_INLINE ? PyDict_Update(out, value) : PyDict_SetItem(out, field->name, value))
            goto done;
    }
    result = 0;
done:
    for (Py_ssize_t slot = 0; slot < message->count; slot++)
        Py_XDECREF(values[slot]);
    if (values != on_stack)
        PyMem_Free(values);
    return result;
}

/* ---- the Tables type ------------------------------------------------------------------------------------ */

static void clear_messages(Tables *self)
{
    for (Py_ssize_t m = 0; m < self->count; m++) {
        MessageSpec *message = &self->messages[m];
        for (Py_ssize_t f = 0; f < message->count && message->fields != NULL; f++) {
            Py_XDECREF(message->fields[f].name);
            Py_XDECREF(message->fields[f].zero);
        }
        PyMem_Free(message->fields);
        PyMem_Free(message->slot_of);
    }
    PyMem_Free(self->messages);
    self->messages = NULL;
    self->count = 0;
}

static void tables_dealloc(Tables *self)
{
    clear_messages(self);
    Py_XDECREF(self->raw_json);
    Py_XDECREF(self->raw_extension_name);
    Py_XDECREF(self->fields_v1_name);
    Py_XDECREF(self->api_version_key);
    Py_XDECREF(self->kind_key);
    Py_XDECREF(self->metadata_key);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* one message: a tuple of fields, each (number, wire, JSON name or None, shape, kind, message index,
 * keep_zero, map zero, map zero is a new dict) */
static int load_message(Tables *self, MessageSpec *message, PyObject *fields)
{
    if (!PyTuple_Check(fields)) {
        PyErr_SetString(PyExc_TypeError, "a message is a tuple of fields");
        return -1;
    }
    message->count = PyTuple_GET_SIZE(fields);
    message->fields = PyMem_Calloc((size_t)message->count + 1, sizeof(FieldSpec));
    if (message->fields == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int max_number = 0, supported = 1;
    for (Py_ssize_t f = 0; f < message->count; f++) {
        FieldSpec *field = &message->fields[f];
        PyObject *name, *zero;
        int fresh_dict;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, f), "iiOiiipOp", &field->number, &field->wire, &name,
                              &field->shape, &field->kind, &field->message, &field->keep_zero, &zero, &fresh_dict))
            return -1;
        if (field->kind == KIND_MESSAGE && (field->message < 0 || field->message >= self->count)) {
            PyErr_SetString(PyExc_ValueError, "a field names a message the table lacks");
            return -1;
        }
        if (field->shape == SHAPE_INLINE ? name != Py_None : !PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "a field's name is a str (None when inline)");
            return -1;
        }
        field->name = name == Py_None ? NULL : Py_NewRef(name);
        field->zero = fresh_dict ? NULL : Py_NewRef(zero);
        if (field->number <= 0 || field->number > MAX_FIELD_NUMBER)
            supported = 0;
        else if (field->number > max_number)
            max_number = field->number;
    }
    if (!supported)
        return 0;  /* slot_of stays NULL: the message is left to Python */
    message->max_number = max_number;
    message->slot_of = PyMem_Malloc(sizeof(short) * (size_t)(max_number + 1));
    if (message->slot_of == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int n = 0; n <= max_number; n++)
        message->slot_of[n] = -1;
    for (Py_ssize_t f = 0; f < message->count; f++)
        message->slot_of[message->fields[f].number] = (short)f;
    return 0;
}

static PyObject *tables_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *messages, *raw_json;
    int max_depth;
    static char *keywords[] = {"messages", "raw_json", "max_depth", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!Oi", keywords, &PyTuple_Type, &messages, &raw_json,
                                     &max_depth))
        return NULL;
    Tables *self = (Tables *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->max_depth = max_depth;
    self->raw_json = Py_NewRef(raw_json);
    self->raw_extension_name = PyUnicode_InternFromString("RawExtension");
    self->fields_v1_name = PyUnicode_InternFromString("FieldsV1");
    self->api_version_key = PyUnicode_InternFromString("apiVersion");
    self->kind_key = PyUnicode_InternFromString("kind");
    self->metadata_key = PyUnicode_InternFromString("metadata");
    Py_ssize_t count = PyTuple_GET_SIZE(messages);
    self->messages = PyMem_Calloc((size_t)count + 1, sizeof(MessageSpec));
    if (self->raw_extension_name == NULL || self->fields_v1_name == NULL || self->api_version_key == NULL
        || self->kind_key == NULL || self->metadata_key == NULL || self->messages == NULL) {
        Py_DECREF(self);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    self->count = count;
    for (Py_ssize_t m = 0; m < count; m++) {
        if (load_message(self, &self->messages[m], PyTuple_GET_ITEM(messages, m)) < 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

/* the bytes and the bounds of a read: -1 (a TypeError or ValueError set) when they do not fit */
static int bounds(PyObject *const *args, const unsigned char **buf, Py_ssize_t *start, Py_ssize_t *end)
{
    if (!PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "the body is bytes");
        return -1;
    }
    *buf = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    *start = PyLong_AsSsize_t(args[1]);
    *end = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred())
        return -1;
    if (*start < 0 || *start > *end || *end > PyBytes_GET_SIZE(args[0])) {
        PyErr_SetString(PyExc_ValueError, "start and end lie outside the body");
        return -1;
    }
    return 0;
}

static int message_index(Tables *self, PyObject *arg)
{
    Py_ssize_t index = PyLong_AsSsize_t(arg);
    if (index == -1 && PyErr_Occurred())
        return -1;
    if (index < 0 || index >= self->count) {
        PyErr_SetString(PyExc_IndexError, "no such message in the table");
        return -1;
    }
    return (int)index;
}

/* out, or None where a failed read is the Python path's to answer (a MemoryError goes on) */
static PyObject *answer(PyObject *out, int failed)
{
    if (!failed)
        return out;
    Py_XDECREF(out);
    if (PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            return NULL;
        PyErr_Clear();
    }
    Py_RETURN_NONE;
}

static PyObject *tables_message(Tables *self, PyObject *const *args, Py_ssize_t nargs)
{
    const unsigned char *buf;
    Py_ssize_t start, end;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "message(index, body, start, end, depth)");
        return NULL;
    }
    int index = message_index(self, args[0]);
    if (index < 0 || bounds(args + 1, &buf, &start, &end) < 0)
        return NULL;
    long depth = PyLong_AsLong(args[4]);
    if (depth == -1 && PyErr_Occurred())
        return NULL;
    if (depth < 0 || depth > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "a depth from 0 on");
        return NULL;
    }
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    return answer(out, read_message(self, buf, start, end, index, (int)depth, out) < 0);
}

static PyObject *tables_object(Tables *self, PyObject *const *args, Py_ssize_t nargs)
{
    const unsigned char *buf;
    Py_ssize_t start, end;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "object(index, metadata, body, start, end, api_version, kind)");
        return NULL;
    }
    int index = message_index(self, args[0]);
    if (index < 0 || bounds(args + 2, &buf, &start, &end) < 0)
        return NULL;
    int metadata = PyObject_IsTrue(args[1]);
    if (metadata < 0)
        return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    int failed = PyDict_SetItem(out, self->api_version_key, args[5]) < 0
                 || PyDict_SetItem(out, self->kind_key, args[6]) < 0;
    if (!failed && metadata) {
        PyObject *empty = PyDict_New();
        failed = empty == NULL || PyDict_SetItem(out, self->metadata_key, empty) < 0;
        Py_XDECREF(empty);
    }
    if (failed) {
        Py_DECREF(out);
        return NULL;
    }
    return answer(out, read_message(self, buf, start, end, index, 1, out) < 0);
}

/* read_envelope(kinds, body): a body in Go's envelope -- the magic, {1: typeMeta, 2: raw, 3: "", 4: ""}, the
 * typeMeta's size of one byte and the raw's of one or two -- whose typeMeta's bytes are a key of ``kinds``
 * (a dict: typeMeta -> (Tables, message index, metadata, apiVersion, kind)), read as Tables.object reads it;
 * None for any other body (the Python path reads it, and puts its kind in ``kinds`` when it is one) */
static PyObject *read_envelope(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyDict_Check(args[0]) || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "read_envelope(kinds: dict, body: bytes)");
        return NULL;
    }
    const unsigned char *body = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t length = PyBytes_GET_SIZE(args[1]);
    if (length < 10 || memcmp(body, "k8s\0\x0a", 5) != 0 || body[5] > 0x7F)
        Py_RETURN_NONE;
    Py_ssize_t raw_at = 7 + body[5];  /* the raw's size, after the typeMeta and the raw's key */
    if (raw_at + 1 >= length || body[raw_at - 1] != 0x12)
        Py_RETURN_NONE;
    Py_ssize_t start = raw_at + 1, size = body[raw_at];
    if (size > 0x7F) {
        if (body[start] > 0x7F)
            Py_RETURN_NONE;
        size = (size & 0x7F) | (Py_ssize_t)body[start] << 7;
        start++;
    }
    if (start + size != length - 4 || memcmp(body + length - 4, "\x1a\x00\x22\x00", 4) != 0)
        Py_RETURN_NONE;
    PyObject *type_meta = PyBytes_FromStringAndSize((const char *)body + 6, body[5]);
    if (type_meta == NULL)
        return NULL;
    PyObject *known = PyDict_GetItemWithError(args[0], type_meta);
    Py_DECREF(type_meta);
    if (known == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 5
        || !PyObject_TypeCheck(PyTuple_GET_ITEM(known, 0), &TablesType)) {
        PyErr_SetString(PyExc_TypeError, "kinds' values are (Tables, index, metadata, apiVersion, kind)");
        return NULL;
    }
    Py_INCREF(known);  /* (held while read: the embedded JSON's Python code may let another thread change kinds) */
    PyObject *object_args[7] = {PyTuple_GET_ITEM(known, 1), PyTuple_GET_ITEM(known, 2), args[1], NULL, NULL,
                                PyTuple_GET_ITEM(known, 3), PyTuple_GET_ITEM(known, 4)};
    object_args[3] = PyLong_FromSsize_t(start);
    object_args[4] = PyLong_FromSsize_t(start + size);
    PyObject *out = NULL;
    if (object_args[3] != NULL && object_args[4] != NULL)
        out = tables_object((Tables *)PyTuple_GET_ITEM(known, 0), object_args, 7);
    Py_XDECREF(object_args[3]);
    Py_XDECREF(object_args[4]);
    Py_DECREF(known);
    return out;
}

static PyMethodDef tables_methods[] = {
    {"message", (PyCFunction)(void (*)(void))tables_message, METH_FASTCALL,
     "message(index, body, start, end, depth): the JSON object of message ``index`` in body[start:end], or "
     "None where the Python path must read it."},
    {"object", (PyCFunction)(void (*)(void))tables_object, METH_FASTCALL,
     "object(index, metadata, body, start, end, api_version, kind): the same as a whole object, its "
     "apiVersion and kind first (and, with ``metadata``, an empty metadata its own replaces), or None."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TablesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dralloc.server.protobuf._fastwire.Tables",
    .tp_basicsize = sizeof(Tables),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Tables(messages, raw_json, max_depth): the messages of one schema table, compiled for reading.",
    .tp_new = tables_new,
    .tp_dealloc = (destructor)tables_dealloc,
    .tp_methods = tables_methods,
};

static PyMethodDef module_methods[] = {
    {"read_envelope", (PyCFunction)(void (*)(void))read_envelope, METH_FASTCALL,
     "read_envelope(kinds, body): a body in Go's envelope of a kind of ``kinds`` read as Tables.object reads "
     "it, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fastwire_module = {
    PyModuleDef_HEAD_INIT,
    .m_methods = module_methods,
    .m_name = "_fastwire",
    .m_doc = "The optional C reader of protobuf bodies (see dralloc.server.protobuf.accelerated).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__fastwire(void)
{
    if (PyType_Ready(&TablesType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&fastwire_module);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "Tables", (PyObject *)&TablesType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
