/* SPDX-License-Identifier: Apache-2.0 */
/* `agentrun features`: what this build and this host support. */
#ifndef AR_CORE_FEATURES_H
#define AR_CORE_FEATURES_H

/* The runtime-spec features.json document, malloc'd. */
char *ar_features_json (void);

#endif
