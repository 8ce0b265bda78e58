// SPDX-License-Identifier: Apache-2.0
/* The e1000's calls beyond the roles' tables (devices/dev_sandbox.h): a
 * migration's failed switch takes its tap back (e1000_handover), on the
 * controller. */
#include "devices/e1000/e1000_kind.h"
#include "net/tap.h"

const struct dev_sandbox e1000_sandbox = {
    .role[SANDBOX_CONTROLLER] = TAP_REOPEN_RULES,
};
