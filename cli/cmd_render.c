#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: quire render [--provider P] [--model M] [--from DIALECT] [--state F] [--remind F]\n"
    "                    [--state-out F] [--events F] [--caps F] [--policy F] [--max-tokens N]\n"
    "                    [--lossy] [--pretty] [--explain] [-o FILE] [FILE|-]\n"
    "                    [--params F] [--temperature X] [--top-p X] [--top-k N] [--seed N] [--stop S]\n"
    "                    [--tool-choice C] [--parallel-tool-calls B] [--response-format text|json]\n"
    "                    [--reasoning-effort E] [--reasoning-budget N] [--stream] [--user U]\n"
    "                    [--envelope]\n"
    "\n"
    "Renders a quire.transcript/1 transcript into the request body for a provider.\n"
    "\n"
    "  --provider P     target provider (default anthropic)\n"
    "  --model M        target model (default: the provider's default)\n"
    "  --max-tokens N   max output tokens (default: 4096 where the dialect requires one, else omitted)\n"
    "  --pretty         two-space indented output\n"
    "  --caps FILE      capability override rows, consulted before the built-in table\n"
    "  --policy FILE    render policy: {\"systemSlot\":\"allow\"|\"demote\", \"placement\":\"tail\"|\"append_only\",\n"
    "                   \"cacheBreakpoints\":\"managed\"|\"input\", \"lossy\": bool,\n"
    "                   \"peerMaxSlot\":\"user_block\"|\"developer\"|\"system\"}\n"
    "  --from DIALECT   input is a request body: anthropic, openai_chat, openai_responses, gemini;\n"
    "                   its parameters are carried under --params and the flags\n"
    "  --lossy          content the target cannot express becomes an event, not an error\n"
    "  --explain        print the resolved capability row and the render events to stderr\n"
    CLI_REMIND_HELP
    "  -o FILE          write the request to FILE (atomically) instead of stdout\n"
    "\nRequest parameters (docs/params.md); one the target cannot carry is an error (--lossy: an event):\n"
    "  --params F       a JSON object: maxTokens, temperature, topP, topK, stop, seed, toolChoice,\n"
    "                   parallelToolCalls, responseFormat, reasoning, stream, user, providerOptions\n"
    "  --temperature X, --top-p X, --top-k N, --seed N, --stop S, --user U\n"
    "                   one parameter each (over the same one in --params)\n"
    "  --tool-choice C  auto, none, required, or the name of a tool to call\n"
    "  --parallel-tool-calls B   true or false\n"
    "  --response-format F       text or json\n"
    "  --reasoning-effort E      none, minimal, low, medium, high or xhigh\n"
    "  --reasoning-budget N      thinking budget in tokens\n"
    "  --stream         ask for a streamed response (body field or streaming path)\n"
    "  --envelope       write {\"method\",\"path\",\"headers\",\"body\"} instead of the body alone\n";

/* ---- request parameters from single flags: one JSON object ---- */
typedef struct pbuf { char *p; size_t n, cap; bool oom; } pbuf;
static void pput(pbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) { b->oom = true; return; }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}
static void pputs(pbuf *b, const char *s) { pput(b, s, strlen(s)); }
static void pkey(pbuf *b, const char *k) {
    pputs(b, b->n > 1 ? ",\"" : "\"");
    pputs(b, k);
    pputs(b, "\":");
}
static void pstr(pbuf *b, const char *s) {
    pputs(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '"' || ch == '\\') { esc[0] = '\\'; esc[1] = (char)ch; pput(b, esc, 2); }
        else if (ch < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", ch); pputs(b, esc); }
        else pput(b, s, 1);
    }
    pputs(b, "\"");
}
/* A JSON number as given (checked: the whole flag is one JSON number). */
static bool pnum(pbuf *b, const char *flag, const char *v) {
    bool ok = v && (*v == '-' || (*v >= '0' && *v <= '9'));
    if (ok) {
        quire_error e;
        quire_options o = QUIRE_OPTIONS_INIT;
        ok = quire_json_check(v, strlen(v), &o, &e) == QUIRE_OK;
    }
    if (!ok) { cli_usage("render", "--%s expects a number, got \"%s\"", flag, v ? v : ""); return false; }
    pputs(b, v);
    return true;
}

int cmd_render(int argc, char **argv) {
    const char *provider = "anthropic", *model = NULL, *out = NULL;
    bool pretty = false;
    unsigned long long max_tokens = 0;
    const char *caps_file = NULL, *policy_file = NULL, *from = NULL; /* render module */
    bool lossy = false, explain = false;
    /* request parameters (docs/params.md) */
    const char *params_file = NULL, *temperature = NULL, *top_p = NULL, *top_k = NULL, *seed = NULL, *stop = NULL,
               *tool_choice = NULL, *parallel = NULL, *rformat = NULL, *effort = NULL, *budget = NULL, *user = NULL;
    bool stream = false, envelope = false;
    cli_remind rm = {NULL, NULL, NULL, NULL}; /* reminders module: --state --remind --state-out --events */
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"pretty", CLI_FLAG, &pretty, NULL}, {"max-tokens", CLI_UINT, &max_tokens, NULL},
        {"o", CLI_STRING, &out, NULL},
        {"caps", CLI_STRING, &caps_file, NULL}, {"policy", CLI_STRING, &policy_file, NULL},
        {"from", CLI_STRING, &from, NULL}, {"lossy", CLI_FLAG, &lossy, NULL}, {"explain", CLI_FLAG, &explain, NULL},
        {"params", CLI_STRING, &params_file, NULL}, {"temperature", CLI_STRING, &temperature, NULL},
        {"top-p", CLI_STRING, &top_p, NULL}, {"top-k", CLI_STRING, &top_k, NULL}, {"seed", CLI_STRING, &seed, NULL},
        {"stop", CLI_STRING, &stop, NULL}, {"tool-choice", CLI_STRING, &tool_choice, NULL},
        {"parallel-tool-calls", CLI_STRING, &parallel, NULL}, {"response-format", CLI_STRING, &rformat, NULL},
        {"reasoning-effort", CLI_STRING, &effort, NULL}, {"reasoning-budget", CLI_STRING, &budget, NULL},
        {"stream", CLI_FLAG, &stream, NULL}, {"user", CLI_STRING, &user, NULL}, {"envelope", CLI_FLAG, &envelope, NULL},
        CLI_REMIND_OPTS(&rm),
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("render", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (max_tokens > 0xFFFFFFFFu) return cli_usage("render", "--max-tokens is too large");
    /* single parameter flags: one JSON object over --params */
    pbuf fl = {NULL, 0, 0, false};
    pputs(&fl, "{");
    bool num_ok = true;
    if (temperature) { pkey(&fl, "temperature"); num_ok = num_ok && pnum(&fl, "temperature", temperature); }
    if (top_p && num_ok) { pkey(&fl, "topP"); num_ok = pnum(&fl, "top-p", top_p); }
    if (top_k && num_ok) { pkey(&fl, "topK"); num_ok = pnum(&fl, "top-k", top_k); }
    if (seed && num_ok) { pkey(&fl, "seed"); num_ok = pnum(&fl, "seed", seed); }
    if (budget && num_ok) { pkey(&fl, "reasoning"); pputs(&fl, "{\"budgetTokens\":"); num_ok = pnum(&fl, "reasoning-budget", budget); pputs(&fl, "}"); }
    if (!num_ok) { free(fl.p); return 2; }
    if (stop) { pkey(&fl, "stop"); pstr(&fl, stop); }
    if (tool_choice) {
        pkey(&fl, "toolChoice");
        if (!strcmp(tool_choice, "auto") || !strcmp(tool_choice, "none") || !strcmp(tool_choice, "required")) pstr(&fl, tool_choice);
        else { pputs(&fl, "{\"tool\":"); pstr(&fl, tool_choice); pputs(&fl, "}"); }
    }
    if (parallel) {
        if (strcmp(parallel, "true") && strcmp(parallel, "false")) {
            free(fl.p);
            return cli_usage("render", "--parallel-tool-calls expects true or false, got \"%s\"", parallel);
        }
        pkey(&fl, "parallelToolCalls"); pputs(&fl, parallel);
    }
    if (rformat) { pkey(&fl, "responseFormat"); pstr(&fl, rformat); }
    if (effort) { pkey(&fl, "reasoning"); pputs(&fl, "{\"effort\":"); pstr(&fl, effort); pputs(&fl, "}"); }
    if (stream) { pkey(&fl, "stream"); pputs(&fl, "true"); }
    if (user) { pkey(&fl, "user"); pstr(&fl, user); }
    pputs(&fl, "}");
    if (fl.oom) { free(fl.p); return cli_fail("out of memory"); }
    if (effort && budget) { free(fl.p); return cli_usage("render", "--reasoning-effort and --reasoning-budget exclude each other"); }
    bool have_flags = fl.n > 2;
    cli_file pf = {0};
    if (have_flags) {
        quire_error pe;
        if (quire_params_check(fl.p, fl.n, &pe)) { cli_report("<parameter flags>", &pe); free(fl.p); return 1; }
    }
    if (params_file) {
        quire_error pe;
        if (!cli_read(params_file, &pf)) { free(fl.p); return 1; }
        if (quire_params_check(pf.data, pf.len, &pe)) { cli_report(pf.name, &pe); cli_file_free(&pf); free(fl.p); return 1; }
    }
    quire_state *state = NULL;
    quire_bytes pre; /* events of --remind */
    if (cli_remind_load(&rm, NULL, &state, &pre, NULL)) { cli_file_free(&pf); free(fl.p); return 1; }
    cli_file f;
    if (!cli_map(npos ? pos[0] : "-", &f)) { /* read-only: parsed in place (borrowed) */
        quire_state_free(state); quire_bytes_free(&pre); cli_file_free(&pf); free(fl.p); return 1;
    }
    quire_error e;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_transcript *t = NULL;
    if (from ? quire_transcript_parse_dialect(from, f.data, f.len, &o, &t, &e)
             : quire_transcript_parse(f.data, f.len, &o, &t, &e)) {
        cli_report(f.name, &e); cli_file_free(&f); quire_state_free(state); quire_bytes_free(&pre);
        cli_file_free(&pf); free(fl.p); return 1;
    }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    if (params_file) { ro.params = pf.data; ro.params_len = pf.len; }
    if (have_flags) { ro.params_override = fl.p; ro.params_override_len = fl.n; }
    ro.provider = provider;
    ro.model = model;
    ro.pretty = pretty;
    ro.max_tokens = (uint32_t)max_tokens;
    quire_caps *caps; /* render module: capability overrides and policy */
    if (!cli_load_caps_policy(caps_file, policy_file, &ro, &caps)) {
        quire_transcript_free(t); cli_file_free(&f);
        quire_state_free(state); quire_bytes_free(&pre); cli_file_free(&pf); free(fl.p);
        return 1;
    }
    ro.caps = caps;
    if (lossy) ro.lossy = 1;
    /* --from: the body's own parameters, under --params and the flags */
    quire_bytes bp = {0}, bev = {0};
    if (from && quire_params_from_dialect(from, f.data, f.len, &ro, &o, &bp, &bev, &e)) {
        cli_report(f.name, &e); quire_caps_free(caps); quire_transcript_free(t); cli_file_free(&f);
        quire_state_free(state); quire_bytes_free(&pre); cli_file_free(&pf); free(fl.p);
        return 1;
    }
    if (bp.len) { ro.params_base = bp.data; ro.params_base_len = bp.len; }
    quire_render_result res;
    quire_status st = quire_render(t, state, &ro, &o, &res, &e);
    quire_bytes_free(&bp);
    quire_transcript_free(t);
    cli_file_free(&pf);
    free(fl.p);
    quire_state_free(state);
    if (explain) { /* render module: the resolved row and every decision, on stderr */
        quire_bytes row;
        quire_error e2;
        if (quire_caps_resolve(caps, provider, model, 0, &row, &e2) == QUIRE_OK) {
            fprintf(stderr, "quire: caps %s\n", row.data);
            quire_bytes_free(&row);
        }
        if (!st && res.events.len) fprintf(stderr, "%s", res.events.data);
    }
    quire_caps_free(caps);
    if (st) {
        /* errors about a parameter name it (its pointer is a parameter's):
         * report them against the parameters, not the transcript */
        static const char *const pnames[] = {"/maxTokens", "/temperature", "/topP", "/topK", "/stop", "/seed",
                                             "/toolChoice", "/parallelToolCalls", "/responseFormat", "/reasoning",
                                             "/stream", "/user", "/providerOptions"};
        const char *where = f.name;
        for (size_t i = 0; i < sizeof pnames / sizeof pnames[0] && (params_file || have_flags); i++) {
            size_t n = strlen(pnames[i]);
            if (strncmp(e.pointer, pnames[i], n) == 0 && (e.pointer[n] == '\0' || e.pointer[n] == '/'))
                where = params_file ? params_file : "<parameter flags>";
        }
        cli_report(where, &e); cli_file_free(&f); quire_bytes_free(&pre); quire_bytes_free(&bev); return 1;
    }
    cli_file_free(&f);
    if (envelope) { /* {method, path, headers, body} */
        quire_bytes both = {0}, env = res.envelope;
        size_t n = env.len + res.request.len + 16;
        char *buf = malloc(n);
        if (!buf || env.len < 2) { free(buf); quire_render_result_free(&res); quire_bytes_free(&pre); quire_bytes_free(&bev); return cli_fail("out of memory"); }
        size_t k = env.len - 1; /* without the closing brace */
        memcpy(buf, env.data, k);
        memcpy(buf + k, ",\"body\":", 8);
        k += 8;
        memcpy(buf + k, res.request.data, res.request.len);
        k += res.request.len;
        buf[k++] = '}';
        quire_error fe;
        quire_options fo = QUIRE_OPTIONS_INIT;
        quire_status fs = quire_json_format(buf, k, pretty, &fo, &both, &fe);
        free(buf);
        if (fs) { cli_report("<envelope>", &fe); quire_render_result_free(&res); quire_bytes_free(&pre); quire_bytes_free(&bev); return 1; }
        quire_bytes_free(&res.request);
        res.request = both;
    }
    cli_outputs *outs = cli_out_new();
    cli_out_add_line(outs, out, &res.request);
    /* the events of the body fields --lossy dropped come before the render's */
    if (!cli_remind_outputs(&rm, outs, res.state, &pre, &bev, &res.events)) {
        quire_render_result_free(&res); cli_out_discard(outs); return 1;
    }
    quire_render_result_free(&res);
    return cli_out_commit(outs);
}
