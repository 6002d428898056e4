"""What hidden checks are written with: cases, the one tensor comparison, and the user proxy.

A kata's check module (checker/checks/TRACK_NAME/checks.py) sets the options declared in `Options`
below (TARGET, CASES, OUTPUTS, MISTAKES, ...), defines
    inputs(case, dtype) -> tuple of positional arguments (seeded: same case, same values)
    init(case)   -> constructor kwargs for a module kata; absent for a function kata
and any number of extra checks decorated with @check(stage, title). Its own constants start with
an underscore: a public UPPERCASE name that is not an option is a misspelling, and the project's
tests say so (tests/checks/test_catalogue.py, through unknown_options).

Everything a check does to the user's code goes through the Kit it is handed: user(), drive(),
inspect(), layout(). No check module touches the sandbox.

The rooms: authoring (the vocabulary above), compare (the one tensor comparison), crashes (a crash
explained), diagnosis (named mistakes), proxy (the Kit), standard (the checks every kata gets from its
options). Check modules import from checker.kit, which names them all.
"""

from checker.kit.authoring import (  # noqa: F401
    Fail, FollowUp, Accepted, Convention, FLOAT32_INSIDE, FLOAT32_INTERNALS, Case, case, Options, OPTION_NAMES, options,
    unknown_options, check, title_of, id_of,
)
from checker.kit.compare import (  # noqa: F401
    RTOL_F64, ATOL_F64, RTOL_F32, ATOL_F32, DTYPES, describe, dtype_diagnosis, compare, matches, divmod_index,
    as_outputs, float_tensor, floating, shape_relation,
)
from checker.kit.crashes import (  # noqa: F401
    DEVICE_MISMATCH, user_line, at_line, raised, crash_diagnosis, loses_an_axis,
)
from checker.kit.diagnosis import (  # noqa: F401
    Mistake, MEMORY_NAMES, identify, unused_argument,
)
from checker.kit.proxy import (  # noqa: F401
    Kit, arg_names,
)
from checker.kit.standard import (  # noqa: F401
    expect_structure, expect_raises, standard_checks, dropout_elsewhere, dropout_missing, calls_per_part, batch_independence,
    any_leading_axes, dropout_checks, world_check, same_object_check,
)
from checker.errors import UserError  # noqa: F401 - what kit.user raises
