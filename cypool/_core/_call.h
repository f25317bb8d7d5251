/* The front ends' call(name, *args, **kwargs) as a C method (cypool/_core/_call.pyx). */
#ifndef CYPOOL_CALL_H
#define CYPOOL_CALL_H
#include <Python.h>

static PyObject* cp_call_str_bound = NULL;      /* "_bound_methods" */
static PyObject* cp_call_str_slow = NULL;       /* "_call" */
static PyObject* cp_call_str_name = NULL;       /* "name" */

/* self._call(name, args, kwargs), the arguments made from the vectorcall's. */
static PyObject* cp_call_slow(PyObject* self, PyObject* name, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames, Py_ssize_t skip)
{
    PyObject *tup = NULL, *kw = NULL, *res = NULL;
    Py_ssize_t k, nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (!(tup = PyTuple_New(nargs)) || !(kw = PyDict_New()))
        goto done;
    for (k = 0; k < nargs; k++) {
        Py_INCREF(args[k]);
        PyTuple_SET_ITEM(tup, k, args[k]);
    }
    for (k = 0; k < nkw; k++)
        if (k != skip && PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]))
            goto done;
    res = PyObject_CallMethodObjArgs(self, cp_call_str_slow, name, tup, kw, NULL);
done:
    Py_XDECREF(tup);
    Py_XDECREF(kw);
    return res;
}

static PyObject* cp_call(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                         PyObject* kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), k;
    if (nargs == 0) {                   /* call(name=..., ...) */
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (k = 0; k < nkw; k++) {
            int eq = PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, k), cp_call_str_name);
            if (eq == -1 && PyErr_Occurred())
                return NULL;
            if (eq == 0)
                return cp_call_slow(self, args[k], args, 0, kwnames, k);
        }
        PyErr_SetString(PyExc_TypeError,
                        "call() missing 1 required positional argument: 'name'");
        return NULL;
    }
    PyObject* bound = PyObject_GetAttr(self, cp_call_str_bound);
    if (bound == NULL)
        return NULL;
    PyObject* fn = PyDict_CheckExact(bound) ? PyDict_GetItemWithError(bound, args[0]) : NULL;
    Py_XINCREF(fn);                     /* the dict may drop it while fn runs */
    Py_DECREF(bound);
    if (fn != NULL) {
        PyObject* res = PyObject_Vectorcall(fn, args + 1, nargs - 1, kwnames);
        Py_DECREF(fn);
        return res;
    }
    if (PyErr_Occurred())               /* an unhashable name */
        return NULL;
    return cp_call_slow(self, args[0], args + 1, nargs - 1, kwnames, -1);
}

static PyMethodDef cp_call_def = {
    "call", (PyCFunction) (void (*)(void)) cp_call, METH_FASTCALL | METH_KEYWORDS,
    "call($self, name, *args, **kwargs)\n--\n\n"
    "SyncVectorEnv.call: ``\"render\"`` calls :meth:`render`; a method the family\n"
    "declares (``FamilySpec.methods``: Gymnasium-Robotics' ``compute_reward``, ...) runs\n"
    "for every env at once, one result per env; an attribute (see :meth:`get_attr`) is\n"
    "returned per env, as SyncVectorEnv returns non-callables. ``\"step\"``,\n"
    "``\"reset\"`` and ``\"close\"`` are refused (ValueError): SyncVectorEnv runs them\n"
    "on each sub-env alone, while a cypool pool steps, resets and closes its envs together\n"
    "(env.step, env.reset with reset_mask, env.close)."};

static PyObject* cp_call_descriptor(PyTypeObject* cls)
{
    if (cp_call_str_bound == NULL) {
        cp_call_str_bound = PyUnicode_InternFromString("_bound_methods");
        cp_call_str_slow = PyUnicode_InternFromString("_call");
        cp_call_str_name = PyUnicode_InternFromString("name");
        if (!cp_call_str_bound || !cp_call_str_slow || !cp_call_str_name)
            return NULL;
    }
    return PyDescr_NewMethod(cls, &cp_call_def);
}

#endif
