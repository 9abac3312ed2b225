#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

static const char k_help[] =
    "usage: quire caps [--provider P [--model M]] [--list] [--caps FILE] [--pretty] [-o FILE]\n"
    "\n"
    "Prints the capability row that rendering uses for a provider and model\n"
    "(first match wins, override rows from --caps consulted first), or with\n"
    "--list the whole table.\n"
    "\n"
    "  --provider P   anthropic, openai, openai_responses, gemini, bedrock, mistral,\n"
    "                 ollama, deepseek or openai_compatible\n"
    "  --model M      model name (default: the provider's default model)\n"
    "  --list         print the table (override rows, built-in rows, default models)\n"
    "  --caps FILE    capability override file ({\"rows\": [...]})\n"
    "  --pretty       two-space indented output\n"
    "  -o FILE        write to FILE (atomically) instead of stdout\n";

int cmd_caps(int argc, char **argv) {
    const char *provider = NULL, *model = NULL, *caps_file = NULL, *out = NULL;
    bool list = false, pretty = false;
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"list", CLI_FLAG, &list, NULL},           {"caps", CLI_STRING, &caps_file, NULL},
        {"pretty", CLI_FLAG, &pretty, NULL},       {"o", CLI_STRING, &out, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("caps", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 0, &npos);
    if (r >= 0) return r;
    if (!list && !provider) return cli_usage("caps", "give --provider P [--model M] or --list");
    if (list && provider) return cli_usage("caps", "--list and --provider are exclusive");
    if (model && !provider) return cli_usage("caps", "--model needs --provider");
    quire_error e;
    quire_caps *caps = NULL;
    if (caps_file) {
        cli_file f;
        if (!cli_read(caps_file, &f)) return 1;
        quire_status st = quire_caps_parse(f.data, f.len, NULL, &caps, &e);
        if (st) { cli_report(f.name, &e); cli_file_free(&f); return 1; }
        cli_file_free(&f);
    }
    quire_bytes b;
    quire_status st = list ? quire_caps_list(caps, pretty, &b, &e)
                           : quire_caps_resolve(caps, provider, model, pretty, &b, &e);
    quire_caps_free(caps);
    if (st) { cli_report(NULL, &e); return 1; }
    cli_outputs *o = cli_out_new();
    cli_out_add_line(o, out, &b);
    return cli_out_commit(o);
}
