// `gpufabric._gpufabric`: the C++ side of the Python module. It runs a request through the same
// command table as the `gpufabric` executable (cli::execute), so a Python call and the CLI give
// the same numbers for the same request, and turns the library's InputError into the Python
// exception gpufabric.InputError with the file, line, column and field it names. The typed
// Python objects are built in python/gpufabric/ from the commands' JSON.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <CLI/CLI.hpp>

#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "core/error.hpp"

namespace py = pybind11;

namespace {

// Raises gpufabric.errors.InputError(message, file=, line=, column=, field=, problem=, valid=).
void raise_input_error(const std::string& message, const gf::SourceLocation& where, const std::string& field,
                       const std::string& problem, const std::string& valid) {
  const py::object cls = py::module_::import("gpufabric.errors").attr("InputError");
  const py::object err =
      cls(message, py::arg("file") = where.file, py::arg("line") = where.line, py::arg("column") = where.column,
          py::arg("field") = field, py::arg("problem") = problem, py::arg("valid") = valid);
  PyErr_SetObject(cls.ptr(), err.ptr());
}

// The output and what the CLI would print on stderr (its warnings), which the package turns into
// Python warnings.
std::pair<std::string, std::string> execute(const std::vector<std::string>& args) {
  // The model runs without the interpreter, so other Python threads run meanwhile (a sweep over a
  // thread pool); nothing below touches a Python object.
  py::gil_scoped_release release;
  std::ostringstream err;
  std::string out = gf::cli::execute(args, err);
  return {std::move(out), err.str()};
}

}  // namespace

PYBIND11_MODULE(_gpufabric, m) {
  m.doc() = "gpufabric's C++ core; use the `gpufabric` package, not this module.";
  m.def(
      "execute", &execute, py::arg("args"),
      "Runs one gpufabric command (the arguments after `gpufabric`); returns (stdout, stderr) as the CLI prints them.");
  m.attr("__version__") = GPUFABRIC_VERSION;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const gf::InputError& e) {
      raise_input_error(e.what(), e.where(), e.field(), e.problem(), e.valid());
    } catch (const CLI::ParseError& e) {
      raise_input_error(e.what(), {}, "", e.what(), "see the command's --help");
    } catch (const std::bad_alloc&) {
      raise_input_error("out of memory building the model; try fewer nodes", {}, "", "out of memory", "fewer nodes");
    }
  });
}
