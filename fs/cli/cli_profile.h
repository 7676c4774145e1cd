/* `sievefs profile s3://BUCKET[/PREFIX] [OPTIONS]`: measure the link to the
 * object store as a mount's warmup does (fs/warmup/warmup.h) and print the
 * connection profile, without mounting. Also the profile's text form, which
 * `sievefs mount` prints on a terminal when its warmup ends. */
#ifndef SIEVE_CLI_PROFILE_H
#define SIEVE_CLI_PROFILE_H
#include <stddef.h>

#include "connection_profile.h"

/* argv[0] is "profile". 0 with a valid profile; 1 when none could be
 * measured (one line on stderr); 2 on usage errors. */
int cli_profile(int argc, char **argv);

/* The profile as text lines ("latency  101.2 ms median, 104.9 ms p90\n"...),
 * NUL-terminated in buf (truncated to n). */
void cli_profile_format(const conn_profile *p, char *buf, size_t n);

#endif
