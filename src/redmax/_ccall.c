/*
 * redmax._ccall: call a compiled kernel on NumPy arrays with as little per-call work as CPython allows.
 *
 * Why this file exists (per-call overhead on small robots): a Numba dispatcher matches and unboxes every array
 * argument on every call, and for six arrays that alone costs about as much as the whole of Pinocchio's rnea on a
 * double pendulum.  The kernels stay Numba's: redmax.dynamics._c_entry compiles C-callable entry points
 * (numba.cfunc) of the same compiled recursions, and this module only checks the arrays and passes their data
 * pointers.
 *
 * A Bound object is one (kernel, model) pair: bound(a[, b, c][, out]) checks that every input is an exact
 * ndarray of float64, 1-D of length n, C-contiguous, aligned, in native byte order, and that `out` (if given) is
 * such an array of shape (n,) or (n, n) and writeable; it allocates the result otherwise, calls the kernel and
 * returns the result.  Any other argument, or a nonzero status from the kernel (a non-finite input or result, a
 * singular joint inertia), returns NotImplemented: the caller then runs its checked path, which names the
 * problem.  Nothing is raised here and nothing is converted.
 *
 * Kernel signature (see redmax/dynamics/_c_entry.py):
 *   int64 kernel(const int64 *Ii, int64 nI, const double *Ff, int64 nF, double *W, int64 nW,
 *                const double *a, const double *b, const double *c, double *out, int64 n)
 * with b and c NULL for kernels of one input vector.  W is the Bound's own workspace: the GIL is held for the
 * whole call and the kernel never calls back into Python, so no two calls use it at once.  Every array reaches
 * the kernel as a bare pointer, so the compiled code keeps no reference counts (atomic operations) on them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

typedef int64_t (*kernel_fn)(const int64_t *, int64_t, const double *, int64_t, double *, int64_t, const double *,
                             const double *, const double *, double *, int64_t);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_fn fn;
    PyArrayObject *Ii;
    PyArrayObject *Ff;
    PyArrayObject *W;
    npy_intp n;
    int nin;  /* number of input vectors: 1 or 3 */
    int nd;   /* result dimensions: 1 (n,) or 2 (n, n) */
} Bound;

/* An exact float64 ndarray of `nd` dimensions, each of length n, C-contiguous, aligned, native byte order
 * (and writeable if asked). */
static inline int
good_array(PyObject *o, int nd, npy_intp n, int writeable)
{
    if (!PyArray_CheckExact(o))
        return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_NDIM(a) != nd || PyArray_TYPE(a) != NPY_DOUBLE)
        return 0;
    const npy_intp *dims = PyArray_DIMS(a);
    for (int k = 0; k < nd; k++)
        if (dims[k] != n)
            return 0;
    if (!PyArray_ISCARRAY_RO(a) || !PyArray_ISNOTSWAPPED(a))
        return 0;
    if (writeable && !PyArray_ISWRITEABLE(a))
        return 0;
    return 1;
}

static PyObject *
not_implemented(void)
{
    Py_INCREF(Py_NotImplemented);
    return Py_NotImplemented;
}

static PyObject *
bound_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Bound *self = (Bound *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)
        return not_implemented();
    if (nargs != self->nin && nargs != self->nin + 1)
        return not_implemented();
    const double *in[3] = {NULL, NULL, NULL};
    for (int k = 0; k < self->nin; k++) {
        if (!good_array(args[k], 1, self->n, 0))
            return not_implemented();
        in[k] = (const double *)PyArray_DATA((PyArrayObject *)args[k]);
    }
    PyObject *res;
    if (nargs == self->nin + 1) {
        res = args[self->nin];
        if (!good_array(res, self->nd, self->n, 1))
            return not_implemented();
        Py_INCREF(res);
    }
    else {
        npy_intp dims[2] = {self->n, self->n};
        res = PyArray_SimpleNew(self->nd, dims, NPY_DOUBLE);
        if (res == NULL)
            return NULL;
    }
    int64_t status = self->fn((const int64_t *)PyArray_DATA(self->Ii), (int64_t)PyArray_SIZE(self->Ii),
                              (const double *)PyArray_DATA(self->Ff), (int64_t)PyArray_SIZE(self->Ff),
                              (double *)PyArray_DATA(self->W), (int64_t)PyArray_SIZE(self->W), in[0],
                              in[1], in[2], (double *)PyArray_DATA((PyArrayObject *)res), (int64_t)self->n);
    if (status != 0) {
        Py_DECREF(res);
        return not_implemented();
    }
    return res;
}

static PyObject *
bound_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"address", "Ii", "Ff", "W", "n", "nin", "nd", NULL};
    unsigned long long address;
    PyObject *Ii, *Ff, *W;
    Py_ssize_t n;
    int nin, nd;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "KOOOnii", kwlist, &address, &Ii, &Ff, &W, &n, &nin, &nd))
        return NULL;
    if (address == 0 || n < 0 || (nin != 1 && nin != 3) || (nd != 1 && nd != 2)) {
        PyErr_SetString(PyExc_ValueError, "Bound: bad address, n, nin or nd");
        return NULL;
    }
    if (!PyArray_CheckExact(Ii) || PyArray_TYPE((PyArrayObject *)Ii) != NPY_INT64 ||
        PyArray_NDIM((PyArrayObject *)Ii) != 1 || !PyArray_ISCARRAY_RO((PyArrayObject *)Ii) ||
        !PyArray_CheckExact(Ff) || PyArray_TYPE((PyArrayObject *)Ff) != NPY_DOUBLE ||
        PyArray_NDIM((PyArrayObject *)Ff) != 1 || !PyArray_ISCARRAY_RO((PyArrayObject *)Ff) ||
        !PyArray_CheckExact(W) || PyArray_TYPE((PyArrayObject *)W) != NPY_DOUBLE ||
        PyArray_NDIM((PyArrayObject *)W) != 1 || !PyArray_ISCARRAY((PyArrayObject *)W)) {
        PyErr_SetString(PyExc_TypeError,
                        "Bound: Ii must be a C-contiguous int64 vector, Ff a float64 one and W a writeable float64 one");
        return NULL;
    }
    Bound *self = (Bound *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = bound_vectorcall;
    self->fn = (kernel_fn)(uintptr_t)address;
    Py_INCREF(Ii);
    Py_INCREF(Ff);
    Py_INCREF(W);
    self->W = (PyArrayObject *)W;
    self->Ii = (PyArrayObject *)Ii;
    self->Ff = (PyArrayObject *)Ff;
    self->n = (npy_intp)n;
    self->nin = nin;
    self->nd = nd;
    return (PyObject *)self;
}

static void
bound_dealloc(Bound *self)
{
    Py_XDECREF(self->Ii);
    Py_XDECREF(self->Ff);
    Py_XDECREF(self->W);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject BoundType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "redmax._ccall.Bound",
    .tp_doc = PyDoc_STR("Bound(address, Ii, Ff, W, n, nin, nd): a compiled kernel bound to a packed model; "
                        "call with nin float64 vectors (and an optional out); NotImplemented for anything else."),
    .tp_basicsize = sizeof(Bound),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = bound_new,
    .tp_dealloc = (destructor)bound_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Bound, vectorcall),
};

/* Table(address, nvar): a compiled kernel of the C signature  int64 kernel(int64 *T)  that reads every array it
 * works on from the int64 table T (see redmax.dynamics._so_cfunc): T[2k] the data address and T[2k + 1] the
 * spec of the first nvar ("variable") slots, T[2 nvar] their common length n, then fixed slots the caller wrote
 * once.  table(T, a_0, ..., a_{nvar-1}) checks each a_k as good_array does, of |T[2k + 1]| dimensions of
 * length n (writeable if T[2k + 1] < 0), writes its data address into T[2k], calls the kernel on T and returns
 * its status (an int); NotImplemented for any other argument.  T must be an int64 C-contiguous writeable array
 * the caller built for this kernel (its fixed slots are trusted: redmax builds them from arrays it keeps
 * alive); the GIL is held for the whole call, so no two calls write T at once. */
typedef int64_t (*table_fn)(int64_t *);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    table_fn fn;
    Py_ssize_t nvar;
} Table;

static PyObject *
table_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Table *self = (Table *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) || nargs != self->nvar + 1)
        return not_implemented();
    PyObject *t = args[0];
    if (!PyArray_CheckExact(t))
        return not_implemented();
    PyArrayObject *ta = (PyArrayObject *)t;
    if (PyArray_TYPE(ta) != NPY_INT64 || PyArray_NDIM(ta) != 1 || !PyArray_ISCARRAY(ta) ||
        PyArray_SIZE(ta) <= 2 * self->nvar)
        return not_implemented();
    int64_t *T = (int64_t *)PyArray_DATA(ta);
    npy_intp n = (npy_intp)T[2 * self->nvar];
    for (Py_ssize_t k = 0; k < self->nvar; k++) {
        int64_t spec = T[2 * k + 1];
        int w = spec < 0;
        int nd = (int)(w ? -spec : spec);
        if (nd < 1 || nd > 3 || !good_array(args[k + 1], nd, n, w))
            return not_implemented();
        T[2 * k] = (int64_t)(intptr_t)PyArray_DATA((PyArrayObject *)args[k + 1]);
    }
    return PyLong_FromLongLong((long long)self->fn(T));
}

static PyObject *
table_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"address", "nvar", NULL};
    unsigned long long address;
    Py_ssize_t nvar;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Kn", kwlist, &address, &nvar))
        return NULL;
    if (address == 0 || nvar < 0 || nvar > 64) {
        PyErr_SetString(PyExc_ValueError, "Table: bad address or nvar");
        return NULL;
    }
    Table *self = (Table *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = table_vectorcall;
    self->fn = (table_fn)(uintptr_t)address;
    self->nvar = nvar;
    return (PyObject *)self;
}

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "redmax._ccall.Table",
    .tp_doc = PyDoc_STR("Table(address, nvar): a compiled kernel reading its arrays from an int64 table; "
                        "call with (T, a_0, ..., a_{nvar-1}); its status, or NotImplemented."),
    .tp_basicsize = sizeof(Table),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = table_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Table, vectorcall),
};

static struct PyModuleDef ccall_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "redmax._ccall",
    .m_doc = PyDoc_STR("Low-overhead calls of compiled redmax kernels on NumPy arrays (see _ccall.c)."),
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__ccall(void)
{
    import_array();
    PyObject *m = PyModule_Create(&ccall_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddType(m, &BoundType) < 0 || PyModule_AddType(m, &TableType) < 0) {  /* readies each type */
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
