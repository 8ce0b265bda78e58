// SPDX-License-Identifier: Apache-2.0
/* Firecracker's PUT /entropy (EntropyDeviceConfig) onto --rng's keys. */
#include "devices/virtio-rng/virtio_rng.h"

static const struct dev_api_field rng_api_fields[] = {
    {.name = "rate_limiter", .type = DEV_API_RATE_LIMITER, .key = ""},
};

const struct dev_api rng_api = {.route = "/entropy",
				.section = "entropy",
				.schema = "EntropyDeviceConfig",
				.fault = "Error creating the entropy device",
				DEV_API_TABLE(rng_api_fields)};
