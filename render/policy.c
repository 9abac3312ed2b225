/* Render policy files (DESIGN 5.2, 5.4). */
#include "render/render.h"

quire_status quire_render_policy_apply(const char *json, size_t len, quire_render_options *ro, quire_error *err) {
    if (!ro) return q_err(err, QUIRE_E_INVALID, "quire_render_policy_apply: options are required");
    qj_doc d;
    quire_status st = qj_parse(&d, json, len, NULL, q_alloc_default(), err);
    if (st) return st;
    quire_render_options o = *ro;
    if (qj_type_of(&d, 0) != QJ_OBJECT) {
        st = q_err_at(err, QUIRE_E_SCHEMA, 0, "", "expected object (a render policy), got %s",
                      qj_type_name(qj_type_of(&d, 0)));
    }
    uint32_t k = 1;
    for (uint32_t m = 0; !st && m < qj_at(&d, 0)->n; m++, k = qj_next(&d, k + 1)) {
        uint32_t v = k + 1;
        qj_type t = qj_type_of(&d, v);
        if (qj_str_eq(&d, k, "systemSlot")) {
            if (t == QJ_STRING && qj_str_eq(&d, v, "allow")) o.allow_system_slot = 1;
            else if (t == QJ_STRING && qj_str_eq(&d, v, "demote")) o.allow_system_slot = 0;
            else st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, v), "/systemSlot", "expected \"allow\" or \"demote\"");
        } else if (qj_str_eq(&d, k, "placement")) {
            if (t == QJ_STRING && qj_str_eq(&d, v, "tail")) o.placement = QUIRE_PLACEMENT_TAIL;
            else if (t == QJ_STRING && qj_str_eq(&d, v, "append_only")) o.placement = QUIRE_PLACEMENT_APPEND_ONLY;
            else st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, v), "/placement", "expected \"tail\" or \"append_only\"");
        } else if (qj_str_eq(&d, k, "cacheBreakpoints")) {
            if (t == QJ_STRING && qj_str_eq(&d, v, "managed")) o.cache_breakpoints = QUIRE_CACHE_MANAGED;
            else if (t == QJ_STRING && qj_str_eq(&d, v, "input")) o.cache_breakpoints = QUIRE_CACHE_INPUT_ONLY;
            else st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, v), "/cacheBreakpoints", "expected \"managed\" or \"input\"");
        } else if (qj_str_eq(&d, k, "lossy")) {
            if (t == QJ_TRUE || t == QJ_FALSE) o.lossy = t == QJ_TRUE;
            else st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, v), "/lossy", "expected boolean, got %s", qj_type_name(t));
        } else if (qj_str_eq(&d, k, "peerMaxSlot")) {
            if (t == QJ_STRING && qj_str_eq(&d, v, "user_block")) o.peer_max_slot = QUIRE_PEER_SLOT_USER_BLOCK;
            else if (t == QJ_STRING && qj_str_eq(&d, v, "developer")) o.peer_max_slot = QUIRE_PEER_SLOT_DEVELOPER;
            else if (t == QJ_STRING && qj_str_eq(&d, v, "system")) o.peer_max_slot = QUIRE_PEER_SLOT_SYSTEM;
            else st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, v), "/peerMaxSlot",
                               "expected \"user_block\", \"developer\" or \"system\"");
        } else {
            char key[64];
            size_t kl = qj_at(&d, k)->len < sizeof key - 1 ? qj_at(&d, k)->len : sizeof key - 1;
            memcpy(key, qj_at(&d, k)->p, kl);
            key[kl] = '\0';
            st = q_err_at(err, QUIRE_E_SCHEMA, qj_offset(&d, k), "",
                          "unknown field \"%s\" in render policy (expected systemSlot, placement, cacheBreakpoints, lossy, peerMaxSlot)", key);
        }
    }
    if (st && err) q_err_locate(err, json, len);
    qj_doc_free(&d);
    if (!st) *ro = o;
    return st;
}
