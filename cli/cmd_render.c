#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

static const char k_help[] =
    "usage: quire render [--provider P] [--model M] [--pretty] [--max-tokens N] [-o FILE] [FILE|-]\n"
    "\n"
    "Renders a quire.transcript/1 transcript into the request body for a provider.\n"
    "\n"
    "  --provider P     target provider (default anthropic)\n"
    "  --model M        target model (default: the provider's default)\n"
    "  --max-tokens N   max output tokens written into the request (default 4096)\n"
    "  --pretty         two-space indented output\n"
    "  -o FILE          write the request to FILE (atomically) instead of stdout\n";

int cmd_render(int argc, char **argv) {
    const char *provider = "anthropic", *model = NULL, *out = NULL;
    bool pretty = false;
    unsigned long long max_tokens = 0;
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"pretty", CLI_FLAG, &pretty, NULL}, {"max-tokens", CLI_UINT, &max_tokens, NULL},
        {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("render", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (max_tokens > 0xFFFFFFFFu) return cli_usage("render", "--max-tokens is too large");
    cli_file f;
    if (!cli_read(npos ? pos[0] : "-", &f)) return 1;
    quire_error e;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_transcript *t = NULL;
    if (quire_transcript_parse(f.data, f.len, &o, &t, &e)) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    ro.pretty = pretty;
    ro.max_tokens = (uint32_t)max_tokens;
    quire_render_result res;
    quire_status st = quire_render(t, NULL, &ro, &o, &res, &e);
    quire_transcript_free(t);
    if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
    cli_file_free(&f);
    cli_outputs *outs = cli_out_new();
    cli_out_add_line(outs, out, &res.request);
    quire_render_result_free(&res);
    return cli_out_commit(outs);
}
