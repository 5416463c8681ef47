/* print.c - the canonical IR text form (docs/ir.md). Deterministic: the
 * same graph prints the same bytes. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

char *ir_shape_str(const ir_graph *g, const ir_shape *s, char *buf, size_t cap) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "[");
    for (int i = 0; i < s->rank && k < cap; i++) {
        if (i) k += (size_t)snprintf(buf + k, cap - k, ", ");
        if (k >= cap) break;
        if (IR_DIM_IS_SYM(s->dim[i])) {
            uint32_t si = IR_DIM_SYMIDX(s->dim[i]);
            k += (size_t)snprintf(buf + k, cap - k, "%s", si < g->nsyms ? g->syms[si].name : "?");
        } else {
            k += (size_t)snprintf(buf + k, cap - k, "%lld", (long long)s->dim[i]);
        }
    }
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

/* Shortest decimal that reads back to the same double. */
static void fmt_double(double v, char *buf, size_t cap) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static void print_axes(FILE *out, uint32_t mask) {
    fputc('(', out);
    int first = 1;
    for (int i = 0; i < IR_MAX_RANK; i++)
        if (mask & (1u << i)) {
            fprintf(out, first ? "%d" : ", %d", i);
            first = 0;
        }
    fputc(')', out);
}

static void print_attrs(const ir_graph *g, const ir_node *n, FILE *out) {
    unsigned t = ir_op_traits((ir_op)n->op);
    if (t & IR_T_REDUCE) {
        fputs(" {axes=", out);
        print_axes(out, n->a.red.axes);
        fputs(n->a.red.keepdim ? ", keepdim}" : "}", out);
    } else if (n->op == IR_OP_PERMUTE) {
        fputs(" {perm=(", out);
        for (int i = 0; i < n->shape.rank; i++) fprintf(out, i ? ", %d" : "%d", n->a.perm[i]);
        fputs(")}", out);
    } else if (n->op == IR_OP_SLICE) {
        fprintf(out, " {axis=%d, start=%lld, stop=%lld}", n->a.slice.axis,
                (long long)n->a.slice.start, (long long)n->a.slice.stop);
    } else if (n->op == IR_OP_CONCAT || n->op == IR_OP_IOTA) {
        fprintf(out, " {axis=%d}", n->a.axis);
    } else if (n->op == IR_OP_PICK) {
        ir_dim d = n->a.pick.len;
        fprintf(out, " {axis=%d, len=", n->a.pick.axis);
        if (IR_DIM_IS_SYM(d) && IR_DIM_SYMIDX(d) < g->nsyms)
            fprintf(out, "%s}", g->syms[IR_DIM_SYMIDX(d)].name);
        else
            fprintf(out, "%lld}", (long long)d);
    }
}

static void print_node(const ir_graph *g, ir_id id, FILE *out) {
    const ir_node *n = &g->nodes[id];
    char sb[256];
    fprintf(out, "  %%%u", id);
    if (n->name) fprintf(out, " %s", ir_str(g, n->name));
    if (n->op == IR_OP_OUTPUT) {
        fputs(" = output", out);
    } else {
        fprintf(out, " = %s", ir_op_name((ir_op)n->op));
    }
    if (n->op == IR_OP_INPUT) fprintf(out, " %u", n->a.param);
    if (n->op == IR_OP_CONST) {
        char vb[40];
        fmt_double(n->a.cval, vb, sizeof vb);
        fprintf(out, " %s", vb);
    }
    for (unsigned k = 0; k < n->nin; k++) fprintf(out, k ? ", %%%u" : " %%%u", ir_in(g, n, k));
    print_attrs(g, n, out);
    if (n->op != IR_OP_OUTPUT)
        fprintf(out, " : %s%s", ir_dtype_name((ir_dtype)n->dtype),
                ir_shape_str(g, &n->shape, sb, sizeof sb));
    if (n->region != IR_NONE) fprintf(out, " @k%u", n->region);
    if (n->line) fprintf(out, " # %u:%u", n->line, n->col);
    fputc('\n', out);
}

static void print_region(const ir_graph *g, uint32_t i, FILE *out) {
    const ir_region *r = &g->regions[i];
    fprintf(out, "  region k%u = %s [", i, ir_region_kind_name((ir_region_kind)r->kind));
    ir_print_fusions(out, r->fusion, 0);
    fprintf(out, "] anchor=%%%u threads=%u tile=(%lld, %lld, %lld) sram=%lld", r->anchor,
            r->threads, (long long)r->tile[0], (long long)r->tile[1], (long long)r->tile[2],
            (long long)r->sram_bytes);
    if (r->spilled_bytes < 0)
        fputs(" spilled=?", out); /* depends on unbound dims */
    else
        fprintf(out, " spilled=%lld", (long long)r->spilled_bytes);
    fprintf(out, " outputs=%u passes=%u stages=%u rows=%lld", r->nout, r->passes, r->stages,
            (long long)r->rows);
    if (r->kind == IR_RK_REDUCTION || r->kind == IR_RK_ATTENTION)
        fprintf(out, " strategy=%s", ir_red_strategy_name(r->strategy));
    if (r->splits > 1) fprintf(out, " splits=%u", r->splits);
    if (r->picks) { /* [reduction.pick]: bit k is the region's k-th reduction in id order */
        unsigned k = 0, n = 0;
        for (ir_id v = 0; v < g->n; v++) {
            if (g->nodes[v].region != i || !(ir_op_traits((ir_op)g->nodes[v].op) & IR_T_REDUCE))
                continue;
            if (k < 32 && (r->picks & (1u << k))) fprintf(out, "%s%%%u", n++ ? "," : " picks=", v);
            k++;
        }
    }
    if (r->kind == IR_RK_ATTENTION) fprintf(out, " mm1=%%%u scores=%%%u", r->mm1, r->scores);
    fputc('\n', out);
}

void ir_print(const ir_graph *g, FILE *out) {
    fprintf(out, "graph %s {\n", g->name);
    for (uint32_t i = 0; i < g->nsyms; i++) {
        if (g->syms[i].value >= 0)
            fprintf(out, "  sym %s = %lld\n", g->syms[i].name, (long long)g->syms[i].value);
        else
            fprintf(out, "  sym %s\n", g->syms[i].name);
    }
    for (ir_id i = 0; i < g->n; i++) print_node(g, i, out);
    for (uint32_t i = 0; i < g->nregions; i++) print_region(g, i, out);
    fputs("}\n", out);
}
