#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire validate --provider P [--model M] [--caps FILE] [-o FILE] [REQUEST|-]\n"
    "\n"
    "Checks a request body against its dialect's structural rules (roles,\n"
    "alternation, tool call/result pairing and order, breakpoint limits) and the\n"
    "capability row of the provider and model (the request's \"model\" when\n"
    "--model is not given). Exit 0 when valid; 1 with one line per violation,\n"
    "\"quire: FILE: /json/pointer: message\", on stderr.\n"
    "\n"
    "  --provider P   anthropic, openai, openai_responses, gemini, bedrock, mistral,\n"
    "                 ollama, deepseek or openai_compatible\n"
    "  --model M      model name (default: the request's model, else the provider's default)\n"
    "  --caps FILE    capability override file\n"
    "  -o FILE        also write the violations, one \"/json/pointer: message\" line each, to FILE\n"
    "                 (atomically; empty when the request is valid)\n";

int cmd_validate(int argc, char **argv) {
    const char *provider = NULL, *model = NULL, *caps_file = NULL, *out = NULL;
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL},
        {"model", CLI_STRING, &model, NULL},
        {"caps", CLI_STRING, &caps_file, NULL},
        {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("validate", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (!provider) return cli_usage("validate", "--provider is required");
    quire_error e;
    quire_caps *caps = NULL;
    if (caps_file) {
        cli_file cf;
        if (!cli_read(caps_file, &cf)) return 1;
        quire_status st = quire_caps_parse(cf.data, cf.len, NULL, &caps, &e);
        if (st) { cli_report(cf.name, &e); cli_file_free(&cf); return 1; }
        cli_file_free(&cf);
    }
    cli_file f;
    if (!cli_read(npos ? pos[0] : "-", &f)) { quire_caps_free(caps); return 1; }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    ro.caps = caps;
    quire_bytes rep;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_status st = quire_validate(f.data, f.len, &ro, &o, &rep, &e);
    quire_caps_free(caps);
    int rc = 0;
    if (st == QUIRE_E_VALIDATE) {
        /* one line per violation */
        const char *p = rep.data;
        while (p && *p) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            fprintf(stderr, "quire: %s: %.*s\n", f.name, (int)n, p);
            p += n + (nl ? 1 : 0);
        }
        rc = 1;
    } else if (st) {
        cli_report(f.name, &e);
        cli_file_free(&f);
        return 1;
    }
    cli_file_free(&f);
    if (out) {
        cli_outputs *outs = cli_out_new();
        if (st == QUIRE_E_VALIDATE && rep.len && rep.data[rep.len - 1] != '\n') cli_out_add_line(outs, out, &rep);
        else if (st == QUIRE_E_VALIDATE) cli_out_add(outs, out, &rep);
        else cli_out_add_copy(outs, out, "", 0);
        int wr = cli_out_commit(outs);
        if (wr) return wr;
    } else if (st == QUIRE_E_VALIDATE) {
        quire_bytes_free(&rep);
    }
    return rc;
}
