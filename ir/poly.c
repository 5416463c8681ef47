/* poly.c - sums of monomials over symbolic dims, for cost formulas. */
#include "ir/ir.h"

#include <string.h>

void ir_poly_const(ir_poly *p, double c) {
    memset(p, 0, sizeof *p);
    if (c != 0) {
        p->nterms = 1;
        p->t[0].coef = c;
    }
}

static bool same_monomial(const ir_poly_term *a, const ir_poly_term *b) {
    return a->nsym == b->nsym && !memcmp(a->sym, b->sym, a->nsym * sizeof a->sym[0]);
}

static void add_term(ir_poly *p, const ir_poly_term *t) {
    if (t->coef == 0 || p->overflow) return;
    for (int i = 0; i < p->nterms; i++)
        if (same_monomial(&p->t[i], t)) {
            p->t[i].coef += t->coef;
            return;
        }
    if (p->nterms == IR_POLY_TERMS) {
        p->overflow = true;
        return;
    }
    p->t[p->nterms++] = *t;
}

void ir_poly_numel(ir_poly *p, const ir_shape *s, double coef) {
    ir_poly_term t = {.coef = coef};
    memset(p, 0, sizeof *p);
    for (int i = 0; i < s->rank; i++) {
        if (IR_DIM_IS_SYM(s->dim[i])) {
            if (t.nsym == IR_POLY_SYMS) {
                p->overflow = true;
                return;
            }
            uint32_t v = IR_DIM_SYMIDX(s->dim[i]);
            int k = t.nsym++;
            while (k > 0 && t.sym[k - 1] > v) { /* keep sorted */
                t.sym[k] = t.sym[k - 1];
                k--;
            }
            t.sym[k] = v;
        } else {
            t.coef *= (double)s->dim[i];
        }
    }
    add_term(p, &t);
}

void ir_poly_add(ir_poly *p, const ir_poly *q) {
    if (q->overflow) p->overflow = true;
    for (int i = 0; i < q->nterms; i++) add_term(p, &q->t[i]);
}

void ir_poly_scale(ir_poly *p, double c) {
    for (int i = 0; i < p->nterms; i++) p->t[i].coef *= c;
}

bool ir_poly_is_const(const ir_poly *p, double *value) {
    double v = 0;
    if (p->overflow) return false;
    for (int i = 0; i < p->nterms; i++) {
        if (p->t[i].nsym) return false;
        v += p->t[i].coef;
    }
    if (value) *value = v;
    return true;
}

bool ir_poly_eval(const ir_poly *p, const int64_t *syms, unsigned nsyms, double *value) {
    double v = 0;
    if (p->overflow) return false;
    for (int i = 0; i < p->nterms; i++) {
        double t = p->t[i].coef;
        for (int k = 0; k < p->t[i].nsym; k++) {
            if (p->t[i].sym[k] >= nsyms || syms[p->t[i].sym[k]] < 0) return false;
            t *= (double)syms[p->t[i].sym[k]];
        }
        v += t;
    }
    *value = v;
    return true;
}

char *ir_poly_str(const ir_graph *g, const ir_poly *p, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = 0;
    if (p->overflow) {
        snprintf(buf, cap, "?");
        return buf;
    }
    if (p->nterms == 0) {
        snprintf(buf, cap, "0");
        return buf;
    }
    for (int i = 0; i < p->nterms && k < cap; i++) {
        const ir_poly_term *t = &p->t[i];
        if (i) k += (size_t)snprintf(buf + k, cap - k, " + ");
        if (k >= cap) break;
        bool one = t->coef == 1 && t->nsym;
        if (!one) k += (size_t)snprintf(buf + k, cap - k, "%.15g", t->coef);
        for (int s = 0; s < t->nsym && k < cap; s++)
            k += (size_t)snprintf(buf + k, cap - k, "%s%s", (one && s == 0) ? "" : "*",
                                  t->sym[s] < g->nsyms ? g->syms[t->sym[s]].name : "?");
    }
    return buf;
}
