#include "cli.h"

#include <stdio.h>

static const char k_help[] =
    "usage: quire json [--pretty] [--check] [-o FILE] [FILE|-]\n"
    "\n"
    "Reads one JSON text with quire's strict codec (RFC 8259, UTF-8 checked) and\n"
    "writes it back compact (or --pretty, two-space indent). Numbers, string escapes\n"
    "and key order are kept byte for byte. --check only validates (no output).\n";

int cmd_json(int argc, char **argv) {
    bool pretty = false, check = false;
    const char *out = NULL;
    const cli_opt opts[] = {
        {"pretty", CLI_FLAG, &pretty, NULL}, {"check", CLI_FLAG, &check, NULL}, {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1] = {"-"};
    int npos = 0;
    int r = cli_parse("json", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    cli_file f;
    if (!cli_read(npos ? pos[0] : "-", &f)) return 1;
    quire_error e;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_status st;
    if (check) {
        st = quire_json_check(f.data, f.len, &o, &e);
        if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
        cli_file_free(&f);
        return 0;
    }
    quire_bytes b = {0};
    st = quire_json_format(f.data, f.len, pretty, &o, &b, &e);
    if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
    cli_file_free(&f);
    cli_outputs *outs = cli_out_new();
    cli_out_add_line(outs, out, &b);
    return cli_out_commit(outs);
}
