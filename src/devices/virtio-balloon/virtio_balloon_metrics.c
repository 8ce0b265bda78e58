// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon in Firecracker's metrics line: its "balloon" group, the
 * VM's one balloon. Firecracker counts queue events, not pages: an
 * inflate or deflate is one run of its queue; the pages themselves are
 * under "skiff" ("counter virtio-balloon0 inflated pages"). An event
 * fails on a chain the guest got wrong or a discard the host refused. */
#include "devices/virtio-balloon/virtio_balloon.h"

static const struct dev_metric balloon_fields[] = {
    {"activate_fails", {NULL}},
    {"inflate_count", {"inflates"}},
    {"stats_updates_count", {"stats updates"}},
    {"stats_update_fails", {"stats update fails"}},
    {"deflate_count", {"deflates"}},
    {"event_fails", {"bad chains", "discard fails"}},
    {"free_page_report_count", {"reports"}},
    {"free_page_report_freed", {"reported bytes"}},
};

const struct dev_metrics virtio_balloon_metrics = DEV_METRICS("balloon", balloon_fields);
