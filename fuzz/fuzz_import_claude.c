/* Fuzz target: the Claude Code importer. Input: byte 0 the import flags
 * (QUIRE_IMPORT_*), then a Claude Code session JSONL. Checks: no crash; errors
 * carry a message; the session log it writes is JSONL that replays without
 * crashing (and, strictly, without error: quire must read what it writes). */
#define QF_IMPORT_FORMAT "claude-code"
#include "fuzz_import.h"
