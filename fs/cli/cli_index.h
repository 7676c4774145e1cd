/* `sievefs index s3://BUCKET[/PREFIX] (--cache-dir DIR | --to-s3)`: walk the
 * page headers of every column chunk without an OffsetIndex in the Parquet
 * files under PREFIX (fs/view/page_map_index.h) and keep each file
 * version's maps in one bundle (page_map_bundle.h): in DIR, or in S3 under
 * PREFIX/_sieve/pagemaps/ (page_map_remote.h), where mounts find them. */
#ifndef SIEVE_CLI_INDEX_H
#define SIEVE_CLI_INDEX_H

/* argv[0] is "index". 0 when every file was indexed or skipped, 1 when any
 * failed, 2 on usage errors. */
int cli_index(int argc, char **argv);

#endif
