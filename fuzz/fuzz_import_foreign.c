/* Fuzz target: the single-document importers (gemini-cli, cline, swe-agent).
 * Input: byte 0 selects the format (bits 4-5: 0 gemini-cli, 1 cline, 2 and 3
 * swe-agent) with the import flags in its low bits, then the JSON document.
 * Checks: as fuzz_import_claude (no crash; errors carry a message; the log
 * written is JSONL that replays). */
#define QF_IMPORT_FORMAT (((data[0] >> 4) & 3) == 0 ? "gemini-cli" : ((data[0] >> 4) & 3) == 1 ? "cline" : "swe-agent")
#include "fuzz_import.h"
