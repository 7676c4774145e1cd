/* `sievefs hint MOUNTPOINT NAME [--where PRED] [--columns A,B] [--rows FILE:S-E,...]`
 * and `sievefs hint MOUNTPOINT NAME --remove`: write a selection hint into
 * MOUNTPOINT/.sieve/hints/NAME.json and print the view's path. */
#ifndef SIEVE_CLI_HINT_H
#define SIEVE_CLI_HINT_H

/* argv[0] is "hint". Returns 0, 1 when the hint is rejected or cannot be
 * written (the reason on stderr), 2 on a usage error. */
int cli_hint(int argc, char **argv);

#endif
