/* Names of the value-decoding layer's status codes; see decode_error.h. */
#include "decode_error.h"

const char *pqd_status_name(pqd_status s)
{
    switch (s) {
    case PQD_OK: return "ok";
    case PQD_E_TRUNCATED: return "truncated";
    case PQD_E_CORRUPT: return "corrupt";
    case PQD_E_UNSUPPORTED: return "unsupported";
    case PQD_E_LIMIT: return "limit";
    case PQD_E_RANGE: return "range";
    case PQD_E_MISMATCH: return "mismatch";
    case PQD_E_NOMEM: return "nomem";
    case PQD_E_INVALID: return "invalid";
    }
    return "unknown";
}
