/* `sievefs mount s3://BUCKET[/PREFIX] MOUNTPOINT [OPTIONS]`: mount the objects
 * under the prefix read-only and serve them until unmounted. */
#ifndef SIEVE_CLI_MOUNT_H
#define SIEVE_CLI_MOUNT_H

/* argv[0] is "mount". Without -f, returns in the parent once the mount
 * answers (0) or the daemon failed (1, its error on stderr); the daemon
 * returns when unmounted. Argument and start-up errors exit(1) with one line
 * on stderr. */
int cli_mount(int argc, char **argv);

#endif
