"""A problem that the structure stage reports, as the error and display tests pin its
rendering: in ``TaskReport.sections``, at line 12, column 9 of ``report.py``."""

from langtree.errors import Diagnostic

REPORT_DIAGNOSTIC = Diagnostic(
    severity="error",
    message="Destination 'task.missing' does not exist",
    hint="add the task 'TaskMissing', or fix the path",
    class_name="TaskReport",
    field_name="sections",
    file="report.py",
    line=12,
    column=9,
    source_line="! @all->task.missing@{{prompt.x=sections}}",
    length=12,
)
