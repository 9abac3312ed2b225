#define _POSIX_C_SOURCE 200809L
/* Gemini function responses and the request-dialect readers (render --from)
 * lose nothing silently: a JSON object tool result is the functionResponse
 * struct itself, images ride in functionResponse.parts on Gemini 3 rows, the
 * Gemini reader maps both back (render -> from -> render is a fixed point),
 * Chat/Responses image detail and Responses message phase / call namespace
 * are carried, and no reader turns a message whose blocks cannot be carried
 * into an empty content. Every successful render here is also validated. */
#include "quire.h"
#include "unit.h"
#include "render_check.h"

#include <stdlib.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ---- */

static quire_transcript *from(const char *dialect, const char *body, quire_error *e) {
    quire_transcript *t = NULL;
    memset(e, 0, sizeof *e);
    if (quire_transcript_parse_dialect(dialect, body, strlen(body), NULL, &t, e)) return NULL;
    return t;
}

static char *written(const quire_transcript *t) {
    quire_bytes b = {0};
    quire_error e;
    if (quire_transcript_write(t, 0, &b, &e)) return NULL;
    char *s = strdup(b.data);
    quire_bytes_free(&b);
    return s;
}

/* A request body through quire_validate: the report, or NULL when valid. */
static char *report(const char *body, const char *provider, const char *model) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    quire_bytes rep = {0};
    quire_error e;
    quire_status st = quire_validate(body, strlen(body), &ro, NULL, &rep, &e);
    if (st == QUIRE_OK) return NULL;
    char *s = st == QUIRE_E_VALIDATE ? strndup(rep.data, rep.len) : strdup(e.message);
    if (st == QUIRE_E_VALIDATE) quire_bytes_free(&rep);
    return s;
}

/* render(dialect) -> from(dialect) -> render(dialect): the same bytes. */
static void fixed_point(const char *transcript, const char *provider, const char *dialect, const char *model) {
    out o1 = rend(transcript, provider, model, false);
    CHECK_MSG(o1.st == QUIRE_OK, "%s: %s", provider, o1.msg);
    if (!o1.req) return;
    quire_error e;
    quire_transcript *t2 = from(dialect, o1.req, &e);
    CHECK_MSG(t2 != NULL, "from %s: %s %s\n%s", dialect, e.pointer, e.message, o1.req);
    if (t2) {
        out o2 = rend_t(t2, provider, model, false);
        CHECK_MSG(o2.req && strcmp(o1.req, o2.req) == 0, "%s not a fixed point:\n %s\n %s", provider, o1.req,
                  o2.req ? o2.req : o2.msg);
        out_free(&o2);
    }
    quire_transcript_free(t2);
    out_free(&o1);
}

#define CALLS3                                                                                                  \
    "{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\"," \
    "\"name\":\"f\",\"input\":{}},{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"g\",\"input\":{}},{\"type\":"     \
    "\"toolCall\",\"id\":\"c3\",\"name\":\"h\",\"input\":{}}]}"

/* ---- 1. functionResponse.response is a JSON object ---- */
static void test_struct_response(void) {
    const char *j = "{\"messages\":[" CALLS3 ",{\"role\":\"tool\",\"content\":["
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":{\"temp\":21.50,\"unit\":\"C\"}},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c2\",\"content\":\"plain\"},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c3\",\"content\":{\"code\":7},\"isError\":true}]}]}";
    /* the transcript keeps the object byte-exact */
    quire_transcript *t = tr(j);
    CHECK(t != NULL);
    char *w = t ? written(t) : NULL;
    CHECK_HAS(w, "\"content\":{\"temp\":21.50,\"unit\":\"C\"}");
    free(w);
    quire_transcript_free(t);
    out o = rend(j, "gemini", NULL, false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "{\"functionResponse\":{\"id\":\"c1\",\"name\":\"f\",\"response\":{\"temp\":21.50,\"unit\":\"C\"}}}");
    CHECK_HAS(o.req, "{\"functionResponse\":{\"id\":\"c2\",\"name\":\"g\",\"response\":{\"output\":\"plain\"}}}");
    CHECK_HAS(o.req, "{\"functionResponse\":{\"id\":\"c3\",\"name\":\"h\",\"response\":{\"error\":{\"code\":7}}}}");
    out_free(&o);
    /* dialects whose results are text get the object's JSON text */
    o = rend(j, "openai", NULL, false);
    CHECK_HAS(o.req, "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"{\\\"temp\\\":21.50,\\\"unit\\\":\\\"C\\\"}\"}");
    out_free(&o);
    o = rend(j, "anthropic", NULL, false);
    CHECK_HAS(o.req, "\"tool_use_id\":\"c3\",\"content\":\"{\\\"code\\\":7}\",\"is_error\":true");
    out_free(&o);
    fixed_point(j, "gemini", "gemini", NULL);

    /* --from gemini: the wrapper forms are text, any other object a JSON result */
    const char *g = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"go\"}]},{\"role\":\"model\",\"parts\":["
                    "{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}}},{\"functionCall\":{\"id\":\"b\",\"name\":\"f\",\"args\":{}}},"
                    "{\"functionCall\":{\"id\":\"c\",\"name\":\"f\",\"args\":{}}},{\"functionCall\":{\"id\":\"d\",\"name\":\"f\",\"args\":{}}}]},"
                    "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":{\"output\":\"x\"}}},"
                    "{\"functionResponse\":{\"id\":\"b\",\"name\":\"f\",\"response\":{\"content\":\"y\"}}},"
                    "{\"functionResponse\":{\"id\":\"c\",\"name\":\"f\",\"response\":{\"error\":\"boom\"}}},"
                    "{\"functionResponse\":{\"id\":\"d\",\"name\":\"f\",\"response\":{\"rows\":[1,2],\"more\":false}}}]}]}";
    quire_error e;
    quire_transcript *tg = from("gemini", g, &e);
    CHECK_MSG(tg != NULL, "%s %s", e.pointer, e.message);
    w = tg ? written(tg) : NULL;
    CHECK_HAS(w, "{\"type\":\"toolResult\",\"toolCallId\":\"a\",\"content\":\"x\"}");
    CHECK_HAS(w, "{\"type\":\"toolResult\",\"toolCallId\":\"b\",\"content\":{\"content\":\"y\"}}");
    CHECK_HAS(w, "{\"type\":\"toolResult\",\"toolCallId\":\"c\",\"content\":\"boom\",\"isError\":true}");
    CHECK_HAS(w, "{\"type\":\"toolResult\",\"toolCallId\":\"d\",\"content\":{\"rows\":[1,2],\"more\":false}}");
    free(w);
    if (tg) {
        out og = rend_t(tg, "gemini", NULL, false);
        CHECK_HAS(og.req, "\"response\":{\"content\":\"y\"}");
        CHECK_HAS(og.req, "\"response\":{\"rows\":[1,2],\"more\":false}");
        out_free(&og);
    }
    quire_transcript_free(tg);

    /* a response that is not an object is refused with its place */
    const char *bad = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"go\"}]},{\"role\":\"model\",\"parts\":["
                      "{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}}}]},\n{\"role\":\"user\",\"parts\":["
                      "{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":\"x\"}}]}]}";
    tg = from("gemini", bad, &e);
    CHECK(tg == NULL);
    CHECK_STR(e.pointer, "/contents/2/parts/0/functionResponse/response");
    CHECK_INT(e.line, 2);
    CHECK(strstr(e.message, "must be a JSON object") != NULL);
    quire_transcript_free(tg);

    /* a field the transcript has no place for is refused, naming it */
    const char *wc = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"go\"}]},{\"role\":\"model\",\"parts\":["
                     "{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}}}]},{\"role\":\"user\",\"parts\":["
                     "{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":{},\"willContinue\":true}}]}]}";
    tg = from("gemini", wc, &e);
    CHECK(tg == NULL);
    CHECK_STR(e.pointer, "/contents/2/parts/0/functionResponse/willContinue");
    quire_transcript_free(tg);
    const char *rp = "{\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\",\"phase\":\"commentary\"}]}";
    tg = from("openai_responses", rp, &e);
    CHECK(tg == NULL);
    CHECK_STR(e.pointer, "/input/0/phase");
    quire_transcript_free(tg);

    /* the validator: a response that is not an object */
    const char *vb = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"go\"}]},{\"role\":\"model\",\"parts\":["
                     "{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}}}]},{\"role\":\"user\",\"parts\":["
                     "{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":[\"x\"]}}]}]}";
    char *r = report(vb, "gemini", NULL);
    CHECK_HAS(r, "/contents/2/parts/0/functionResponse/response");
    free(r);
}

/* ---- 2. images in function responses ---- */
static void test_response_images(void) {
    const char *j = "{\"messages\":[" CALLS3 ",{\"role\":\"tool\",\"content\":["
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c1\",\"content\":[{\"type\":\"text\",\"text\":\"shot\"},"
                    "{\"type\":\"image\",\"mediaType\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}]},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c2\",\"content\":[{\"type\":\"image\",\"mediaType\":\"image/jpeg\","
                    "\"data\":\"/9j/4AAQ\"}]},"
                    "{\"type\":\"toolResult\",\"toolCallId\":\"c3\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                    "{\"type\":\"text\",\"text\":\"b\"}]}]}]}";
    /* Gemini 3: the images ride in functionResponse.parts */
    out o = rend(j, "gemini", "gemini-3-pro-preview", false);
    CHECK_INT(o.st, QUIRE_OK);
    CHECK_HAS(o.req, "\"response\":{\"output\":\"shot\"},\"parts\":[{\"inlineData\":{\"mimeType\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}}]");
    CHECK_HAS(o.req, "\"response\":{\"output\":[]},\"parts\":[{\"inlineData\":{\"mimeType\":\"image/jpeg\",\"data\":\"/9j/4AAQ\"}}]");
    CHECK_HAS(o.req, "\"response\":{\"output\":[\"a\",\"b\"]}}");
    out_free(&o);
    fixed_point(j, "gemini", "gemini", "gemini-3-pro-preview");
    /* a FunctionResponsePart holds inline data only: an image by URL is an error naming it */
    const char *ju = "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
                     "\"toolCall\",\"id\":\"c1\",\"name\":\"f\",\"input\":{}}]},{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\","
                     "\"toolCallId\":\"c1\",\"content\":[{\"type\":\"image\",\"url\":\"https://example.com/a.jpg\"}]}]}]}";
    o = rend(ju, "gemini", "gemini-3-pro-preview", false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/messages/2/content/0/content/0");
    CHECK(HAS(o.err.message, "an image by URL or file id inside a tool result"));
    out_free(&o);
    /* Gemini 2.5 (no functionResponse.parts): each image follows its response as a part of the
     * same content, as Gemini CLI sends a read_file of an image; nothing is dropped */
    for (int lossy = 0; lossy < 2; lossy++) {
        o = rend(j, "gemini", "gemini-2.5-flash", lossy != 0);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_NOT(o.req, "\"parts\":[{\"inlineData\"");
        CHECK_HAS(o.req, "{\"functionResponse\":{\"id\":\"c1\",\"name\":\"f\",\"response\":{\"output\":\"shot\"}}},"
                         "{\"inlineData\":{\"mimeType\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}},{\"functionResponse\"");
        CHECK_NOT(o.ev, "not_expressible");
        out_free(&o);
    }
    fixed_point(j, "gemini", "gemini", "gemini-2.5-flash"); /* the reader joins them to their result again */
    /* by URL there is still no way */
    o = rend(ju, "gemini", "gemini-2.5-flash", false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/messages/2/content/0/content/0");
    out_free(&o);
    /* the validator: parts only on rows that take them, never empty, media parts only */
    const char *vb = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"go\"}]},{\"role\":\"model\",\"parts\":["
                     "{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}},\"thoughtSignature\":\"U0lH\"}]},{\"role\":\"user\",\"parts\":["
                     "{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":{},\"parts\":[{\"inlineData\":"
                     "{\"mimeType\":\"image/png\",\"data\":\"iVBO\"}}]}}]}]}";
    char *r = report(vb, "gemini", "gemini-3-pro-preview");
    CHECK_MSG(r == NULL, "%s", r);
    free(r);
    r = report(vb, "gemini", "gemini-2.5-flash");
    CHECK_HAS(r, "/contents/2/parts/0/functionResponse/parts: media inside a function response is not supported");
    free(r);
    const char *ve = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"go\"}]},{\"role\":\"model\",\"parts\":["
                     "{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}},\"thoughtSignature\":\"U0lH\"}]},{\"role\":\"user\",\"parts\":["
                     "{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":{},\"parts\":[]}},"
                     "{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":{},\"parts\":[{\"text\":\"x\"}]}}]}]}";
    r = report(ve, "gemini", "gemini-3-pro-preview");
    CHECK_HAS(r, "/contents/2/parts/0/functionResponse/parts: functionResponse parts must be non-empty");
    CHECK_HAS(r, "/contents/2/parts/1/functionResponse/parts/0: a function response part holds inlineData");
    free(r);
    /* --from gemini: a part that is not an image is refused */
    const char *pdf = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"go\"}]},{\"role\":\"model\",\"parts\":["
                      "{\"functionCall\":{\"id\":\"a\",\"name\":\"f\",\"args\":{}}}]},{\"role\":\"user\",\"parts\":["
                      "{\"functionResponse\":{\"id\":\"a\",\"name\":\"f\",\"response\":{\"output\":\"x\"},\"parts\":[{\"inlineData\":"
                      "{\"mimeType\":\"application/pdf\",\"data\":\"JVBE\"}}]}}]}]}";
    quire_error e;
    quire_transcript *t = from("gemini", pdf, &e);
    CHECK(t == NULL);
    CHECK_STR(e.pointer, "/contents/2/parts/0/functionResponse/parts/0");
    quire_transcript_free(t);
}

/* ---- 3. Chat / Responses: image detail, message phase, call namespace ---- */
static void test_openai_fields(void) {
    const char *c = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
                    "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/a.png\",\"detail\":\"low\"}}]}]}";
    quire_error e;
    quire_transcript *t = from("openai_chat", c, &e);
    CHECK_MSG(t != NULL, "%s %s", e.pointer, e.message);
    char *w = t ? written(t) : NULL;
    CHECK_HAS(w, "{\"type\":\"image\",\"url\":\"https://example.com/a.png\",\"detail\":\"low\"}");
    free(w);
    if (t) {
        out o = rend_t(t, "openai", NULL, false);
        CHECK_MSG(o.req && strcmp(o.req, c) == 0, "chat -> chat:\n %s\n %s", c, o.req ? o.req : o.msg);
        out_free(&o);
        o = rend_t(t, "openai_responses", NULL, false);
        CHECK_HAS(o.req, "{\"type\":\"input_image\",\"image_url\":\"https://example.com/a.png\",\"detail\":\"low\"}");
        out_free(&o);
        o = rend_t(t, "gemini", NULL, false); /* no detail in Gemini: the image goes, the loss is reported */
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_HAS(o.req, "\"fileData\":{\"fileUri\":\"https://example.com/a.png\"}");
        CHECK_HAS(o.ev, "\"messageIndex\":0,\"blockIndex\":1,\"reason\":\"not_renderable\",\"detail\":\"the detail level of an image");
        out_free(&o);
    }
    quire_transcript_free(t);
    /* "original" is a Responses detail level; Chat's image_url.detail has none: reported, not written */
    const char *co = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"url\":\"https://example.com/a.png\","
                     "\"detail\":\"original\"}]}]}";
    out oo = rend(co, "openai", NULL, false);
    CHECK_INT(oo.st, QUIRE_OK);
    CHECK_NOT(oo.req, "detail");
    CHECK_HAS(oo.ev, "\"reason\":\"not_renderable\",\"detail\":\"the detail level of an image");
    out_free(&oo);
    oo = rend(co, "openai_responses", NULL, false);
    CHECK_HAS(oo.req, "\"detail\":\"original\"");
    CHECK_STR(oo.ev, "");
    out_free(&oo);
    const char *cb = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
                     "{\"url\":\"https://example.com/a.png\",\"detail\":\"ultra\"}}]}]}";
    t = from("openai_chat", cb, &e);
    CHECK(t == NULL);
    CHECK_STR(e.pointer, "/messages/0/content/0/detail");
    quire_transcript_free(t);

    /* Responses: phase on assistant messages, namespace on calls; input_image detail */
    const char *r =
        "{\"model\":\"gpt-5\",\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
        "\"text\":\"hi\"},{\"type\":\"input_image\",\"image_url\":\"https://example.com/b.png\",\"detail\":\"high\"}]},"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"Looking.\",\"phase\":\"commentary\"},"
        "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"lookup\",\"arguments\":\"{}\",\"namespace\":\"crm\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"ok\"},"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"Done.\",\"phase\":\"final_answer\"},"
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"thanks\"}],"
        "\"tools\":[{\"type\":\"namespace\",\"name\":\"crm\",\"description\":\"CRM\",\"tools\":[{\"type\":\"function\","
        "\"name\":\"lookup\",\"parameters\":{\"type\":\"object\"}}]}]}";
    t = from("openai_responses", r, &e);
    CHECK_MSG(t != NULL, "%s %s", e.pointer, e.message);
    w = t ? written(t) : NULL;
    CHECK_HAS(w, "{\"type\":\"text\",\"text\":\"Looking.\",\"providerOptions\":{\"openai_responses\":{\"phase\":\"commentary\"}}}");
    CHECK_HAS(w, "\"providerOptions\":{\"openai_responses\":{\"namespace\":\"crm\"}}");
    free(w);
    if (t) {
        out o = rend_t(t, "openai_responses", NULL, false);
        CHECK_MSG(o.req && strcmp(o.req, r) == 0, "responses -> responses:\n %s\n %s", r, o.req ? o.req : o.msg);
        out_free(&o);
        /* another provider: the text and the call go, the Responses-only fields are not its own */
        o = rend_t(t, "openai", NULL, true);
        CHECK_INT(o.st, QUIRE_OK);
        CHECK_NOT(o.req, "phase");
        CHECK_HAS(o.req, "\"detail\":\"high\"");
        out_free(&o);
    }
    quire_transcript_free(t);
    /* a transcript's providerOptions name only openai_responses, and a field quire writes is refused */
    quire_transcript *tb = NULL;
    const char *pb = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
                     "\"text\":\"y\",\"providerOptions\":{\"anthropic\":{\"a\":1}}}]}]}";
    CHECK_INT(quire_transcript_parse(pb, strlen(pb), NULL, &tb, &e), QUIRE_E_SCHEMA);
    CHECK_STR(e.pointer, "/messages/1/content/0/providerOptions");
    const char *pd = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
                     "\"text\":\"y\",\"providerOptions\":{\"openai_responses\":{\"role\":\"user\"}}}]}]}";
    out o = rend(pd, "openai_responses", NULL, false);
    CHECK_INT(o.st, QUIRE_E_UNSUPPORTED);
    CHECK_STR(o.err.pointer, "/messages/1/content/0");
    out_free(&o);
}

/* ---- 4. no reader turns an uncarriable message into an empty content ---- */
static void test_no_empty_content(void) {
    const char *cases[][2] = {
        {"anthropic", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
                      "\"redacted_thinking\",\"data\":\"eA==\"}]},{\"role\":\"user\",\"content\":[{\"type\":\"container_upload\","
                      "\"file_id\":\"f1\"}]},{\"role\":\"assistant\",\"content\":\"b\"},{\"role\":\"user\",\"content\":\"c\"}]}"},
        {"anthropic", "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"container_upload\",\"file_id\":\"f1\"}]},"
                      "{\"role\":\"assistant\",\"content\":\"b\"},{\"role\":\"user\",\"content\":\"c\"}]}"},
        {"openai_chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
                        "\"refusal\",\"refusal\":\"no\"}]},{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":"
                        "{\"data\":\"UklGRg==\",\"format\":\"wav\"}}]},{\"role\":\"user\",\"content\":\"c\"}]}"},
        {"openai_responses", "{\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\"},{\"type\":\"reasoning\","
                             "\"id\":\"rs_1\",\"summary\":[],\"encrypted_content\":\"eA==\"},{\"type\":\"message\",\"role\":\"user\","
                             "\"content\":[{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"eA==\"}}]},{\"type\":\"message\","
                             "\"role\":\"user\",\"content\":\"c\"}]}"},
        {"gemini", "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]},{\"role\":\"model\",\"parts\":[{\"executableCode\":"
                   "{\"language\":\"PYTHON\",\"code\":\"1\"}}]},{\"role\":\"user\",\"parts\":[{\"codeExecutionResult\":{\"outcome\":"
                   "\"OUTCOME_OK\"}}]},{\"role\":\"model\",\"parts\":[{\"text\":\"b\"}]},{\"role\":\"user\",\"parts\":[{\"text\":\"c\"}]}]}"},
    };
    const char *targets[][2] = {{"anthropic", NULL}, {"openai", NULL}, {"openai_responses", NULL}, {"gemini", NULL},
                                {"gemini", "gemini-3-pro-preview"}, {"bedrock", NULL}, {"mistral", NULL}, {"ollama", NULL}};
    const char *empty[] = {"\"content\":[]", "\"parts\":[]", "\"content\":\"\"", "\"content\":null}"};
    for (size_t i = 0; i < N_OF(cases); i++) {
        quire_error e;
        quire_transcript *t = from(cases[i][0], cases[i][1], &e);
        CHECK_MSG(t != NULL, "from %s: %s %s", cases[i][0], e.pointer, e.message);
        if (!t) continue;
        for (size_t k = 0; k < N_OF(targets); k++) {
            for (int lossy = 0; lossy < 2; lossy++) {
                out o = rend_t(t, targets[k][0], targets[k][1], lossy);
                if (o.st == QUIRE_OK) {
                    for (size_t x = 0; x < N_OF(empty); x++)
                        CHECK_MSG(!HAS(o.req, empty[x]), "%s -> %s%s: %s in %s", cases[i][0], targets[k][0],
                                  lossy ? " lossy" : "", empty[x], o.req);
                } else {
                    /* refused: one line naming the message (the transcript's, or after a lossy
                     * render the rendered body's) */
                    CHECK_MSG((o.err.pointer[0] == '/' || strstr(o.err.message, ": /") != NULL) &&
                                  strchr(o.err.message, '\n') == NULL,
                              "%s -> %s: %s", cases[i][0], targets[k][0], o.msg);
                }
                out_free(&o);
            }
        }
        quire_transcript_free(t);
    }
}

/* Chat message fields without a transcript form (name, refusal, audio, the
 * legacy function_call) are refused by name; the nulls and empty arrays an
 * answer message copied back holds carry nothing and pass. */
static void test_chat_message_fields(void) {
    static const struct { const char *msg, *ptr; } bad[] = {
        {"{\"role\":\"user\",\"content\":\"hi\",\"name\":\"alice\"}", "/messages/0/name"},
        {"{\"role\":\"assistant\",\"content\":null,\"refusal\":\"I can't help with that.\"}", "/messages/0/refusal"},
        {"{\"role\":\"assistant\",\"content\":null,\"audio\":{\"id\":\"audio_1\"}}", "/messages/0/audio"},
        {"{\"role\":\"assistant\",\"content\":null,\"function_call\":{\"name\":\"f\",\"arguments\":\"{}\"}}",
         "/messages/0/function_call"},
    };
    for (size_t i = 0; i < N_OF(bad); i++) {
        char body[512];
        snprintf(body, sizeof body, "{\"model\":\"gpt-4o\",\"messages\":[%s]}", bad[i].msg);
        quire_error e;
        quire_transcript *t = from("openai_chat", body, &e);
        CHECK_MSG(t == NULL, "accepted: %s", body);
        CHECK_STR(e.pointer, bad[i].ptr);
        CHECK_HAS(e.message, "has no transcript form");
        quire_transcript_free(t);
    }
    const char *ok = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"name\":null},"
                     "{\"role\":\"assistant\",\"content\":\"yo\",\"refusal\":null,\"annotations\":[],\"audio\":null}]}";
    quire_error e;
    quire_transcript *t = from("openai_chat", ok, &e);
    CHECK_MSG(t != NULL, "%s %s", e.pointer, e.message);
    quire_transcript_free(t);
}

/* A function's parameters become an object schema: left out or {} is a
 * function without parameters; any other type, or an Anthropic input_schema
 * without "type": "object", is an error naming it. Every converted request
 * renders into bodies the validator takes. */
static void test_tool_schemas(void) {
    static const struct { const char *dialect, *body, *schema; } ok[] = {
        {"openai_chat", "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],"
                        "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}",
         "\"inputSchema\":{\"type\":\"object\",\"properties\":{}}"},
        {"openai_chat", "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],"
                        "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{}}}]}",
         "\"inputSchema\":{\"type\":\"object\",\"properties\":{}}"},
        {"openai_responses", "{\"model\":\"gpt-5\",\"input\":\"a\",\"tools\":[{\"type\":\"function\",\"name\":\"f\"}]}",
         "\"inputSchema\":{\"type\":\"object\",\"properties\":{}}"},
        {"gemini", "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]}],\"tools\":[{\"functionDeclarations\":"
                   "[{\"name\":\"f\",\"parametersJsonSchema\":{\"type\":\"object\",\"required\":[\"x\"]}}]}]}",
         "\"inputSchema\":{\"type\":\"object\",\"required\":[\"x\"]}"},
    };
    for (size_t i = 0; i < N_OF(ok); i++) {
        quire_error e;
        quire_transcript *t = from(ok[i].dialect, ok[i].body, &e);
        CHECK_MSG(t != NULL, "%s: %s %s", ok[i].body, e.pointer, e.message);
        if (!t) continue;
        char *w = written(t);
        CHECK_MSG(w && strstr(w, ok[i].schema), "%s: %s", ok[i].body, w ? w : "(null)");
        const char *provs[][2] = {{"anthropic", NULL}, {"openai", "gpt-4o"}, {"bedrock", "anthropic.claude-sonnet-4-5-v1:0"}};
        for (size_t k = 0; k < N_OF(provs); k++) {
            quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
            ro.provider = provs[k][0];
            ro.model = provs[k][1];
            quire_render_result r;
            CHECK(quire_render(t, NULL, &ro, NULL, &r, &e) == QUIRE_OK);
            char *rep = report(r.request.data, provs[k][0], provs[k][1]);
            CHECK_MSG(rep == NULL, "%s -> %s: %s", ok[i].body, provs[k][0], rep);
            free(rep);
            quire_render_result_free(&r);
        }
        free(w);
        quire_transcript_free(t);
    }
    static const struct { const char *dialect, *body, *ptr, *msg; } bad[] = {
        {"openai_chat", "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"tools\":[{\"type\":"
                        "\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"string\"}}}]}",
         "/tools/0/function/parameters/type", "only parameters of JSON Schema type \"object\" convert"},
        {"openai_chat", "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"tools\":[{\"type\":"
                        "\"function\",\"function\":{\"name\":\"f\",\"parameters\":\"none\"}}]}",
         "/tools/0/function/parameters", "a tool's parameters must be a JSON Schema object"},
        {"gemini", "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]}],\"tools\":[{\"functionDeclarations\":"
                   "[{\"name\":\"f\",\"parameters\":{\"type\":\"OBJECT\"}}]}]}",
         "/tools/0/functionDeclarations/0/parameters/type", "only parameters of JSON Schema type \"object\" convert"},
        {"anthropic", "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],"
                      "\"tools\":[{\"name\":\"f\",\"input_schema\":{}}]}",
         "/tools/0/input_schema", "an input_schema is a JSON Schema of \"type\": \"object\""},
    };
    for (size_t i = 0; i < N_OF(bad); i++) {
        quire_error e;
        quire_transcript *t = from(bad[i].dialect, bad[i].body, &e);
        CHECK_MSG(t == NULL, "accepted: %s", bad[i].body);
        CHECK_STR(e.pointer, bad[i].ptr);
        CHECK_HAS(e.message, bad[i].msg);
        quire_transcript_free(t);
    }
}


/* ---- the request's own parameters (quire_params_from_dialect) ---- */

/* The params object read from body for a target, or NULL with *e set. */
static char *body_params(const char *dialect, const char *body, const char *provider, int lossy, quire_error *e,
                         char **events) {
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.lossy = lossy;
    quire_bytes p = {0}, ev = {0};
    memset(e, 0, sizeof *e);
    if (events) *events = NULL;
    if (quire_params_from_dialect(dialect, body, strlen(body), &ro, NULL, &p, &ev, e)) return NULL;
    char *s = strdup(p.data ? p.data : "");
    if (events) *events = strdup(ev.data ? ev.data : "");
    quire_bytes_free(&p);
    quire_bytes_free(&ev);
    return s;
}

/* Renders body read from dialect for provider with its parameters. */
static char *render_from(const char *dialect, const char *body, const char *provider, quire_error *e) {
    quire_transcript *t = from(dialect, body, e);
    if (!t) return NULL;
    char *ps = body_params(dialect, body, provider, 0, e, NULL);
    if (!ps) { quire_transcript_free(t); return NULL; }
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.cache_breakpoints = QUIRE_CACHE_INPUT_ONLY;
    if (*ps) { ro.params_base = ps; ro.params_base_len = strlen(ps); }
    quire_render_result r;
    char *req = NULL;
    if (quire_render(t, NULL, &ro, NULL, &r, e) == QUIRE_OK) {
        req = strdup(r.request.data);
        quire_render_result_free(&r);
    }
    free(ps);
    quire_transcript_free(t);
    return req;
}

static void test_body_params(void) {
    quire_error e;
    char *ev = NULL;
    /* each dialect's fields become the neutral parameters, values byte for byte */
    static const struct { const char *dialect, *body, *want; } maps[] = {
        {"anthropic",
         "{\"model\":\"m\",\"max_tokens\":1024,\"temperature\":1.0,\"top_p\":0.9,\"top_k\":5,\"stop_sequences\":[\"X\"],"
         "\"stream\":true,\"metadata\":{\"user_id\":\"u\"},\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048},"
         "\"tool_choice\":{\"type\":\"tool\",\"name\":\"read\",\"disable_parallel_tool_use\":true},"
         "\"tools\":[{\"name\":\"read\",\"input_schema\":{\"type\":\"object\"}}],\"messages\":[]}",
         "{\"maxTokens\":1024,\"temperature\":1.0,\"topP\":0.9,\"topK\":5,\"stop\":[\"X\"],\"stream\":true,\"user\":\"u\","
         "\"reasoning\":{\"budgetTokens\":2048},\"toolChoice\":{\"tool\":\"read\"},\"parallelToolCalls\":false}"},
        {"openai_chat",
         "{\"model\":\"m\",\"messages\":[],\"max_tokens\":9,\"max_completion_tokens\":7,\"stop\":\"END\",\"seed\":-3,"
         "\"user\":\"u\",\"reasoning_effort\":\"low\",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
         "{\"name\":\"x\",\"schema\":{\"type\":\"object\"},\"strict\":true}},\"tools\":[{\"type\":\"function\",\"function\":"
         "{\"name\":\"f\"}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}},\"parallel_tool_calls\":true}",
         "{\"maxTokens\":7,\"stop\":\"END\",\"seed\":-3,\"user\":\"u\",\"reasoning\":{\"effort\":\"low\"},"
         "\"responseFormat\":{\"type\":\"jsonSchema\",\"name\":\"x\",\"schema\":{\"type\":\"object\"},\"strict\":true},"
         "\"toolChoice\":{\"tool\":\"f\"},\"parallelToolCalls\":true,\"providerOptions\":{\"openai\":{\"max_tokens\":9}}}"},
        {"openai_responses",
         "{\"model\":\"m\",\"input\":\"hi\",\"max_output_tokens\":5,\"reasoning\":{\"effort\":\"high\"},\"text\":"
         "{\"format\":{\"type\":\"json_object\"}},\"tool_choice\":\"required\"}",
         "{\"maxTokens\":5,\"reasoning\":{\"effort\":\"high\"},\"responseFormat\":\"json\",\"providerOptions\":"
         "{\"openai_responses\":{\"tool_choice\":\"required\"}}}"},
        {"gemini",
         "{\"contents\":[],\"generationConfig\":{\"maxOutputTokens\":8,\"stopSequences\":[\"a\"],\"responseMimeType\":"
         "\"text/plain\",\"candidateCount\":1,\"thinkingConfig\":{\"thinkingBudget\":-1}},\"safetySettings\":[],"
         "\"tools\":[{\"functionDeclarations\":[{\"name\":\"f\"}]}],\"toolConfig\":{\"functionCallingConfig\":{\"mode\":\"ANY\","
         "\"allowedFunctionNames\":[\"f\"]}}}",
         "{\"maxTokens\":8,\"stop\":[\"a\"],\"responseFormat\":\"text\",\"toolChoice\":{\"tool\":\"f\"},\"providerOptions\":"
         "{\"gemini\":{\"safetySettings\":[],\"generationConfig\":{\"candidateCount\":1,\"thinkingConfig\":"
         "{\"thinkingBudget\":-1}}}}}"},
    };
    static const char *const self[] = {"anthropic", "openai", "openai_responses", "gemini"};
    for (size_t i = 0; i < N_OF(maps); i++) {
        char *got = body_params(maps[i].dialect, maps[i].body, self[i], 0, &e, NULL);
        CHECK_MSG(got != NULL, "%s: %s", maps[i].dialect, e.message);
        if (got) CHECK_STR(got, maps[i].want);
        free(got);
    }
    /* no parameters: nothing */
    char *none = body_params("anthropic", "{\"model\":\"m\",\"messages\":[]}", "anthropic", 0, &e, NULL);
    CHECK(none && *none == '\0');
    free(none);
    /* a field with no neutral form, for another dialect: an error at the field, or dropped with an event */
    const char *chat = "{\"model\":\"m\",\n\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"presence_penalty\":0.5}";
    CHECK(body_params("openai_chat", chat, "anthropic", 0, &e, NULL) == NULL);
    CHECK_INT(e.code, QUIRE_E_UNSUPPORTED);
    CHECK_STR(e.pointer, "/presence_penalty");
    CHECK_INT(e.line, 2);
    CHECK(strstr(e.message, "--lossy") != NULL);
    char *lossy = body_params("openai_chat", chat, "anthropic", 1, &e, &ev);
    CHECK(lossy && *lossy == '\0');
    CHECK(ev && strstr(ev, "\"change\":\"parameter_dropped\",\"parameter\":\"/presence_penalty\"") != NULL);
    free(lossy);
    free(ev);
    /* a value the neutral parameter refuses: the error names the body's field */
    CHECK(body_params("anthropic", "{\"messages\":[],\n\"temperature\":\"hot\"}", "anthropic", 0, &e, NULL) == NULL);
    CHECK_STR(e.pointer, "/temperature");
    CHECK_INT(e.line, 2);
    CHECK(body_params("gemini", "{\"contents\":[],\"generationConfig\":{\"stopSequences\":[1]}}", "gemini", 0, &e,
                      NULL) == NULL);
    CHECK_STR(e.pointer, "/generationConfig/stopSequences/0");
    /* the same dialect: the body comes back as it was */
    static const struct { const char *dialect, *provider, *body; } same[] = {
        {"anthropic", "anthropic",
         "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1024,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
         "\"text\",\"text\":\"hi\"}]}],\"temperature\":0.5,\"service_tier\":\"auto\"}"},
        {"gemini", "gemini",
         "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}],\"generationConfig\":{\"maxOutputTokens\":100,"
         "\"temperature\":0.3,\"thinkingConfig\":{\"thinkingBudget\":0}},\"safetySettings\":[]}"},
    };
    for (size_t i = 0; i < N_OF(same); i++) {
        char *got = render_from(same[i].dialect, same[i].body, same[i].provider, &e);
        CHECK_MSG(got != NULL, "%s: %s", same[i].dialect, e.message);
        if (got) CHECK_STR(got, same[i].body);
        free(got);
    }
    /* across dialects: the neutral ones carried */
    char *x = render_from("anthropic",
                          "{\"model\":\"m\",\"max_tokens\":300,\"temperature\":0.25,\"messages\":[{\"role\":\"user\","
                          "\"content\":\"hi\"}]}",
                          "gemini", &e);
    CHECK(x && strstr(x, "\"generationConfig\":{\"maxOutputTokens\":300,\"temperature\":0.25}") != NULL);
    free(x);
}

int main(void) {
    test_body_params();
    test_tool_schemas();
    test_struct_response();
    test_response_images();
    test_openai_fields();
    test_no_empty_content();
    test_chat_message_fields();
    TEST_MAIN_END();
}
