/* `sievefs inspect FILE|s3://BUCKET/KEY [--json] [--pages] [S3 options]`:
 * a Parquet file's row groups, column chunks and (with --pages) every page
 * with its partial-read eligibility. Text or JSON (docs/inspect.md). */
#ifndef SIEVE_CLI_INSPECT_H
#define SIEVE_CLI_INSPECT_H

/* argv[0] is "inspect". Returns the process exit status: 0, 1 on an error
 * (one line on stderr), 2 on a usage error. */
int cli_inspect(int argc, char **argv);

#endif
