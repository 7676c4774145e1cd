/* sievefs: `sievefs COMMAND [ARGS]` runs the command; --help and --version. */
#include <stdio.h>
#include <string.h>

#include "cli_hint.h"
#include "cli_inspect.h"
#include "cli_mount.h"

static const char usage_top[] =
    "usage: sievefs COMMAND [ARGS]\n"
    "\n"
    "Mount a Delta Lake table (or any prefix) stored in S3 as a read-only local\n"
    "filesystem.\n"
    "\n"
    "commands:\n"
    "  mount s3://BUCKET[/PREFIX] MOUNTPOINT [OPTIONS]   mount (see `sievefs mount --help`)\n"
    "  inspect FILE|s3://BUCKET/KEY [OPTIONS]           show a Parquet file's layout and\n"
    "                                                   partial-read eligibility (see\n"
    "                                                   `sievefs inspect --help`)\n"
    "\n"
    "options:\n"
    "  -h, --help       show this help\n"
    "  -V, --version    show the version\n"
    "\n"
    "Unmount with `fusermount3 -u MOUNTPOINT`.\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_top, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_top, stdout);
        return 0;
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("sievefs %s\n", SIEVE_VERSION);
        return 0;
    }
    if (strcmp(cmd, "mount") == 0)
        return cli_mount(argc - 1, argv + 1);
    if (strcmp(cmd, "inspect") == 0)
        return cli_inspect(argc - 1, argv + 1);
    if (strcmp(cmd, "hint") == 0)
        return cli_hint(argc - 1, argv + 1);
    fprintf(stderr, "sievefs: error: unknown command '%s' (see sievefs --help)\n", cmd);
    return 2;
}
