// SPDX-License-Identifier: Apache-2.0
/* MUST_CHECK marks a registration whose failure leaves a device without
 * its trap, fd or route: ignoring the result is a compile error
 * (-Werror), as kvmtool marks its registrations __must_check. */
#ifndef SKIFF_MUST_CHECK_H
#define SKIFF_MUST_CHECK_H

#define MUST_CHECK __attribute__((warn_unused_result))

#endif
