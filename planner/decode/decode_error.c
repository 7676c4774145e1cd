/* Names of the value-decoding layer's status codes; see decode_error.h. */
#include "decode_error.h"

#include "sv_name.h"

const char *pqd_status_name(pqd_status s)
{
    static const char *const names[] = {
        [PQD_OK] = "ok", [PQD_E_TRUNCATED] = "truncated", [PQD_E_CORRUPT] = "corrupt",
        [PQD_E_UNSUPPORTED] = "unsupported", [PQD_E_LIMIT] = "limit", [PQD_E_RANGE] = "range",
        [PQD_E_MISMATCH] = "mismatch", [PQD_E_NOMEM] = "nomem", [PQD_E_INVALID] = "invalid",
    };
    return SV_NAME(names, s, "unknown");
}
