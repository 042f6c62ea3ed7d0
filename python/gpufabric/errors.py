"""The exception gpufabric raises for bad input, with where the input went wrong."""


class InputError(ValueError):
    """Bad input: a typo in an argument, a malformed cluster file, a layout that cannot run.

    Attributes say where, as the CLI's message does: ``file`` (empty for arguments given in the
    call), ``line`` and ``column`` (1-based, 0 when unknown), ``field`` (a key of the file, or the
    keyword argument of the call), ``problem`` and ``valid`` (what would be accepted).
    """

    def __init__(self, message, *, file="", line=0, column=0, field="", problem="", valid=""):
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.problem = problem
        self.valid = valid

    def __reduce__(self):  # picklable, so process pools can return it
        return (_rebuild, (str(self), self.file, self.line, self.column, self.field, self.problem, self.valid))


def _rebuild(message, file, line, column, field, problem, valid):
    return InputError(message, file=file, line=line, column=column, field=field, problem=problem, valid=valid)
