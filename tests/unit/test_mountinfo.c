#include <criterion/criterion.h>
#include <string.h>

#include "mountinfo.h"

Test(mountinfo, parses_plain_and_escaped_mount_points)
{
    char mp[256];
    unsigned maj = 0, min = 0;
    cr_assert(mountinfo_parse_line("36 35 98:0 / /mnt/data rw,noatime master:1 - ext3 /dev/root rw\n",
                                   mp, sizeof mp, &maj, &min));
    cr_assert_str_eq(mp, "/mnt/data");
    cr_assert_eq(maj, 98);
    cr_assert_eq(min, 0);
    cr_assert(mountinfo_parse_line("50 1 0:57 / /tmp/a\\040b\\134c rw - fuse.sievefs x rw\n", mp,
                                   sizeof mp, &maj, &min));
    cr_assert_str_eq(mp, "/tmp/a b\\c");
    cr_assert_eq(min, 57);
}

Test(mountinfo, rejects_malformed_lines)
{
    char mp[8];
    cr_assert_not(mountinfo_parse_line("", mp, sizeof mp, NULL, NULL));
    cr_assert_not(mountinfo_parse_line("garbage\n", mp, sizeof mp, NULL, NULL));
    cr_assert_not(mountinfo_parse_line("1 2 3:4 / /a/very/long/path rw\n", mp, sizeof mp, NULL, NULL),
                  "a mount point longer than the buffer is refused, not truncated");
}

/* /proc is a mount point everywhere the tests run; "/" is not in a chroot
 * (a fresh machine made with debootstrap), where only what was mounted into
 * it is listed. */
Test(mountinfo, finds_proc)
{
    unsigned major = 99999, minor = 99999;
    cr_assert(mountinfo_find("/proc", &major, &minor));
    cr_assert_neq(major, 99999u, "device numbers are filled in");
    cr_assert_not(mountinfo_find("/definitely/not/a/mount/point", NULL, NULL));
}
