/* Fuzz target: the Codex rollout importer. Input: byte 0 the import flags
 * (QUIRE_IMPORT_*), then a Codex rollout JSONL. Checks: as fuzz_import_claude. */
#define QF_IMPORT_FORMAT "codex"
#include "fuzz_import.h"
