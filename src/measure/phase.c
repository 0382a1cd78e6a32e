/* SPDX-License-Identifier: MIT */
/* The names of a phase's enums: its status, role, and the status of a check. */
#include "measure/phase.h"

const char *const phase_status_names[] = {
	[PHASE_OK] = "ok", [PHASE_FAILED] = "failed", [PHASE_SKIPPED] = "skipped", NULL,
};

const char *phase_status_name(enum phase_status s)
{
	return name_of(phase_status_names, (unsigned)s);
}

const char *const check_status_names[] = {
	[CHECK_PASS] = "pass", [CHECK_WARN] = "warn", [CHECK_FAIL] = "fail", [CHECK_SKIP] = "skip", NULL,
};

const char *check_status_name(enum check_status s)
{
	return name_of(check_status_names, (unsigned)s);
}

const char *const phase_role_names[] = { [PHASE_ROLE_MEASURE] = "measure", [PHASE_ROLE_CONTROL] = "control", NULL };

const char *phase_role_name(enum phase_role r)
{
	return name_of(phase_role_names, (unsigned)r);
}
