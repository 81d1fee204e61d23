/* The fast path of wavekit_profile: scope entry interns a name once per distinct str object
 * (the dict lookup reuses the str's cached hash) and then passes an integer, so entering a
 * scope costs a dict lookup and one call into the profiler. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>

typedef uint32_t (*intern_fn)(const char*);
typedef void (*enter_id_fn)(uint32_t);
typedef void (*void_fn)(void);
typedef void (*enabled_fn)(int);
typedef int (*active_fn)(void);
typedef void (*work_fn)(const double*, double);

static intern_fn intern_name;
static enter_id_fn enter_id;
static void_fn scope_exit, advance;
static enabled_fn set_enabled_fn;
static active_fn active_fn_ptr;
static work_fn work;
static PyObject* ids; /* str -> int name id */

static PyObject* load(PyObject* self, PyObject* args) {
  const char* path;
  (void)self;
  if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
  if (!*path) Py_RETURN_FALSE;
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen(path, RTLD_NOW);
  if (!lib) {
    PyErr_Format(PyExc_OSError, "wavekit_profile: cannot load %s: %s", path, dlerror());
    return NULL;
  }
  intern_name = (intern_fn)dlsym(lib, "wavekit_profile_intern");
  enter_id = (enter_id_fn)dlsym(lib, "wavekit_profile_scope_enter_id");
  scope_exit = (void_fn)dlsym(lib, "wavekit_profile_scope_exit");
  advance = (void_fn)dlsym(lib, "wavekit_profile_advance_phase");
  set_enabled_fn = (enabled_fn)dlsym(lib, "wavekit_profile_set_enabled");
  active_fn_ptr = (active_fn)dlsym(lib, "wavekit_profile_active");
  work = (work_fn)dlsym(lib, "wavekit_profile_set_next_launch_work");
  if (!intern_name || !enter_id || !scope_exit || !advance || !set_enabled_fn || !active_fn_ptr ||
      !work) {
    PyErr_Format(PyExc_OSError, "wavekit_profile: %s lacks the wavekit profile C API", path);
    return NULL;
  }
  Py_RETURN_TRUE;
}

static PyObject* enter(PyObject* self, PyObject* name) {
  (void)self;
  if (!enter_id) Py_RETURN_NONE;
  PyObject* cached = PyDict_GetItemWithError(ids, name);
  if (cached) {
    enter_id((uint32_t)PyLong_AsUnsignedLong(cached));
    Py_RETURN_NONE;
  }
  if (PyErr_Occurred()) return NULL;
  const char* text = PyUnicode_AsUTF8(name);
  if (!text) return NULL;
  if (!active_fn_ptr()) Py_RETURN_NONE; /* before the driver starts the profiler */
  uint32_t id = intern_name(text);
  PyObject* value = PyLong_FromUnsignedLong(id);
  if (!value || PyDict_SetItem(ids, name, value) < 0) {
    Py_XDECREF(value);
    return NULL;
  }
  Py_DECREF(value);
  enter_id(id);
  Py_RETURN_NONE;
}

static PyObject* exit_scope(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (scope_exit) scope_exit();
  Py_RETURN_NONE;
}

static PyObject* advance_phase(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (advance) advance();
  Py_RETURN_NONE;
}

static PyObject* set_enabled(PyObject* self, PyObject* on) {
  (void)self;
  if (set_enabled_fn) set_enabled_fn(PyObject_IsTrue(on));
  Py_RETURN_NONE;
}

static PyObject* active(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyBool_FromLong(active_fn_ptr ? active_fn_ptr() : 0);
}

static PyObject* set_next_launch_work(PyObject* self, PyObject* args) {
  PyObject* flops;
  double bytes;
  double values[7] = {0};
  (void)self;
  if (!PyArg_ParseTuple(args, "Od", &flops, &bytes)) return NULL;
  PyObject* seq = PySequence_Fast(flops, "flops must be a sequence of 7 numbers");
  if (!seq) return NULL;
  if (PySequence_Fast_GET_SIZE(seq) != 7) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "flops must have 7 entries");
    return NULL;
  }
  for (int i = 0; i < 7; ++i) values[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
  Py_DECREF(seq);
  if (PyErr_Occurred()) return NULL;
  if (work) work(values, bytes);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"load", load, METH_VARARGS, "load(path): bind to the injected profiler library"},
    {"enter", enter, METH_O, "enter(name): enter a scope"},
    {"exit", exit_scope, METH_NOARGS, "exit(): leave the innermost scope"},
    {"advance_phase", advance_phase, METH_NOARGS, "end the current phase"},
    {"set_enabled", set_enabled, METH_O, "set_enabled(bool)"},
    {"active", active, METH_NOARGS, "whether a session runs"},
    {"set_next_launch_work", set_next_launch_work, METH_VARARGS,
     "set_next_launch_work(flops[7], bytes)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "wavekit_profile_native", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_wavekit_profile_native(void) {
  ids = PyDict_New();
  if (!ids) return NULL;
  return PyModule_Create(&module);
}
