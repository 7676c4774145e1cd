/* sievefs: `sievefs COMMAND [ARGS]` runs the command; --help and --version.
 * The usage lists the commands from the table that dispatches them, so no
 * command can be left out of it. */
#include <stdio.h>
#include <string.h>

#include "cli_hint.h"
#include "cli_index.h"
#include "cli_inspect.h"
#include "cli_mount.h"
#include "cli_profile.h"

typedef struct {
    const char *name;
    const char *summary; /* its line in `sievefs --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the name; returns the exit status */
} command;

static int cmd_help(int argc, char **argv);

static const command commands[] = {
    {"mount", "mount s3://BUCKET[/PREFIX] read-only on MOUNTPOINT", cli_mount},
    {"inspect", "show a Parquet file's layout and partial-read eligibility", cli_inspect},
    {"hint", "hand a mount a selection hint and print the view it creates", cli_hint},
    {"index", "build the page maps of a table's files ahead of time (for views)", cli_index},
    {"profile", "measure the link to s3://BUCKET[/PREFIX] (latency, bandwidth, capacity)", cli_profile},
    {"help", "show this help", cmd_help},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fputs("usage: sievefs COMMAND [ARGS]\n"
          "\n"
          "Mount a Delta Lake table (or any prefix) stored in S3 as a read-only local\n"
          "filesystem.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-9s%s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "`sievefs COMMAND --help` shows a command's arguments and options.\n"
          "\n"
          "options:\n"
          "  -h, --help       show this help\n"
          "  -V, --version    show the version\n"
          "\n"
          "Unmount with `fusermount3 -u MOUNTPOINT`.\n",
          f);
}

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0)
        return cmd_help(argc - 1, argv + 1);
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("sievefs %s\n", SIEVE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "sievefs: error: unknown command '%s' (see sievefs --help)\n", cmd);
    return 2;
}
