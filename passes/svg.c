/* svg.c - the cost report as a picture (--emit=svg): a log-log roofline
 * with every kernel of the fused and the unfused plan as a labelled point
 * under the GPU's ceilings, a table of the fused kernels beside it, and
 * the predicted timelines of both plans; with measurements (txc bench
 * --svg) the measured points and timelines beside the predicted ones.
 * Reads the facts report.c computes (passes/report.h). Deterministic:
 * fixed formats, region order. */
#include "passes/passes.h"
#include "passes/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    W = 1000, /* canvas width */
    PX = 80,
    PY = 70, /* roofline plot origin (top left) */
    PW = 520,
    PH = 380,   /* roofline plot size */
    TX = 640,   /* table left edge */
    ROW = 14,   /* table row height */
    CHAR_W = 7, /* approximate width of a character at font-size 11 */
    MAX_LABELS = 512,
};

/* One kernel drawn on the roofline. */
typedef struct svg_pt {
    double intensity, tflops; /* position; tflops 0: no floating-point work */
    char label[16];
    int style; /* 0 fused, 1 unfused, 2 measured */
    uint32_t region;
} svg_pt;

/* The axes of the roofline (log10 of the ranges). */
typedef struct svg_axes {
    double lx0, lx1, ly0, ly1;
} svg_axes;

/* A placed label or marker, for overlap tests. */
typedef struct svg_box {
    double x0, y0, x1, y1;
} svg_box;

typedef struct svg_boxes {
    svg_box b[MAX_LABELS];
    unsigned n;
} svg_boxes;

/* Writes s with XML's five special characters escaped. */
static void xml_text(FILE *out, const char *s) {
    for (; *s; s++) {
        switch (*s) {
            case '<': fputs("&lt;", out); break;
            case '>': fputs("&gt;", out); break;
            case '&': fputs("&amp;", out); break;
            case '"': fputs("&quot;", out); break;
            case '\'': fputs("&apos;", out); break;
            default: fputc(*s, out);
        }
    }
}

/* The fill colour of a region kind (the same in roofline and timeline). */
static const char *kind_colour(int kind) {
    switch (kind) {
        case IR_RK_POINTWISE: return "#4e79a7";
        case IR_RK_REDUCTION: return "#59a14f";
        case IR_RK_MATMUL: return "#e15759";
        case IR_RK_ATTENTION: return "#b07aa1";
        case IR_RK_COPY: return "#9c755f";
        default: return "#bab0ac";
    }
}

/* Achieved TFLOP/s of `flops` in `us` microseconds (0 when either is 0). */
static double tflops_of(double flops, double us) {
    return flops > 0 && us > 0 ? flops / us / 1e6 : 0;
}

/* Screen x / y of an intensity / a TFLOP/s value on the axes. */
static double sx(const svg_axes *a, double v) {
    return PX + (log10(v) - a->lx0) / (a->lx1 - a->lx0) * PW;
}
static double sy(const svg_axes *a, double v) {
    return PY + PH - (log10(v) - a->ly0) / (a->ly1 - a->ly0) * PH;
}

/* Collects the roofline points of a plan (style 0 fused, 1 unfused) and,
 * with measured times, the measured points (style 2). Returns the count. */
static unsigned collect_points(const pass_cost *cost, uint32_t n, int style, const double *meas,
                               uint32_t nmeas, svg_pt *pts, unsigned at) {
    for (uint32_t k = 0; k < n; k++) {
        const pass_cost *pc = &cost[k];
        if (!pc->concrete) continue;
        svg_pt *p = &pts[at++];
        p->intensity = pc->intensity;
        p->tflops = tflops_of(pc->f, pc->predicted_us);
        p->style = style;
        p->region = k;
        snprintf(p->label, sizeof p->label, "%s%u", style == 1 ? "u" : "k", k);
        if (meas && k < nmeas && meas[k] > 0) {
            svg_pt *m = &pts[at++];
            *m = *p;
            m->style = 2;
            m->tflops = tflops_of(pc->f, meas[k]);
            snprintf(m->label, sizeof m->label, "%s%u", style == 1 ? "u" : "k", k);
        }
    }
    return at;
}

/* Chooses axes that hold every point and both ridges with a decade of room. */
static void choose_axes(const pass_gpu *gpu, const svg_pt *pts, unsigned n, svg_axes *a) {
    double peak = gpu->peak_TFLOPs[IR_BF16] > gpu->peak_TFLOPs[IR_F32] ? gpu->peak_TFLOPs[IR_BF16]
                                                                       : gpu->peak_TFLOPs[IR_F32];
    double imin = pass_ridge(gpu, IR_F32) / 100, imax = pass_ridge(gpu, IR_BF16) * 10;
    double ymin = peak / 1e4, ymax = peak * 2;
    for (unsigned i = 0; i < n; i++) {
        if (pts[i].tflops <= 0) continue;
        if (pts[i].intensity < imin) imin = pts[i].intensity;
        if (pts[i].intensity > imax) imax = pts[i].intensity;
        if (pts[i].tflops < ymin) ymin = pts[i].tflops;
    }
    a->lx0 = floor(log10(imin));
    a->lx1 = ceil(log10(imax));
    a->ly0 = floor(log10(ymin));
    a->ly1 = ceil(log10(ymax));
    if (a->lx1 - a->lx0 < 1) a->lx1 = a->lx0 + 1;
    if (a->ly1 - a->ly0 < 1) a->ly1 = a->ly0 + 1;
}

/* Decade grid lines and tick labels of both axes, with the axis titles. */
static void draw_grid(const svg_axes *a, FILE *out) {
    fprintf(
        out,
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fcfcfc\" stroke=\"#444\"/>\n",
        PX, PY, PW, PH);
    for (double e = a->lx0; e <= a->lx1 + 1e-9; e += 1) {
        double x = PX + (e - a->lx0) / (a->lx1 - a->lx0) * PW;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, PY,
                x, PY + PH);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" class=\"t\">%g</text>\n", x,
                PY + PH + 16, pow(10, e));
    }
    for (double e = a->ly0; e <= a->ly1 + 1e-9; e += 1) {
        double y = PY + PH - (e - a->ly0) / (a->ly1 - a->ly0) * PH;
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", PX, y,
                PX + PW, y);
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"t\">%g</text>\n",
                PX - 6, y + 4, pow(10, e));
    }
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"a\">arithmetic intensity (FLOP "
            "per HBM byte)</text>\n",
            PX + PW / 2, PY + PH + 34);
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"a\" transform=\"rotate(-90 %d "
            "%d)\">"
            "achieved TFLOP/s</text>\n",
            PX - 48, PY + PH / 2, PX - 48, PY + PH / 2);
}

/* One ceiling: the bandwidth slope up to the ridge of `peak`, then flat. */
static void draw_ceiling(const svg_axes *a, double hbm_GBps, double peak, const char *name,
                         const char *dash, FILE *out) {
    double ridge = peak * 1000.0 / hbm_GBps;
    double i0 = pow(10, a->lx0), i1 = pow(10, a->lx1);
    double y0 = hbm_GBps * i0 / 1000.0;
    double ylo = pow(10, a->ly0);
    if (y0 < ylo) { /* start where the slope enters the plot */
        i0 = ylo * 1000.0 / hbm_GBps;
        y0 = ylo;
    }
    fprintf(out,
            "<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1.6\"%s points=\"%.1f,%.1f "
            "%.1f,%.1f %.1f,%.1f\"/>\n",
            dash, sx(a, i0), sy(a, y0), sx(a, ridge), sy(a, peak), sx(a, i1), sy(a, peak));
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" class=\"c\">%s %.0f TFLOP/s</text>\n",
            sx(a, i1) - 4, sy(a, peak) - 4, name, peak);
}

static bool box_hits(const svg_boxes *bs, const svg_box *b) {
    if (b->x0 < PX || b->x1 > PX + PW || b->y0 < PY || b->y1 > PY + PH) return true;
    for (unsigned i = 0; i < bs->n; i++)
        if (b->x0 < bs->b[i].x1 && bs->b[i].x0 < b->x1 && b->y0 < bs->b[i].y1 &&
            bs->b[i].y0 < b->y1)
            return true;
    return false;
}

static void box_add(svg_boxes *bs, double x0, double y0, double x1, double y1) {
    if (bs->n < MAX_LABELS) bs->b[bs->n++] = (svg_box){x0, y0, x1, y1};
}

/* Screen position of point p (zero-FLOP kernels sit on the bottom edge). */
static void point_xy(const svg_axes *a, const svg_pt *p, double *x, double *y) {
    double i = p->intensity > 0 ? p->intensity : pow(10, a->lx0);
    *x = p->tflops > 0 ? sx(a, i) : PX + 6;
    *y = p->tflops > 0 ? sy(a, p->tflops) : PY + PH - 6;
}

/* Draws the markers, then places each label at the first of eight spots
 * around its point that overlaps no other label or marker (fused first);
 * a label with no free spot is left out (the table still names it). */
static void draw_points(const svg_axes *a, const svg_pt *pts, unsigned n, const int *kinds,
                        FILE *out) {
    static const double off[8][2] = {{7, -4}, {7, 12}, {-7, -4}, {-7, 12},
                                     {0, -9}, {0, 19}, {12, 4},  {-12, 4}};
    svg_boxes *bs = ir_xcalloc(1, sizeof *bs);
    for (unsigned i = 0; i < n; i++) {
        double x, y;
        point_xy(a, &pts[i], &x, &y);
        box_add(bs, x - 5, y - 5, x + 5, y + 5);
    }
    for (int style = 0; style < 3; style++)
        for (unsigned i = 0; i < n; i++) {
            const svg_pt *p = &pts[i];
            double x, y;
            if (p->style != style) continue;
            point_xy(a, p, &x, &y);
            if (p->style == 0)
                fprintf(out,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#000\" "
                        "stroke-width=\"0.6\" class=\"pf\"><title>%s</title></circle>\n",
                        x, y, kind_colour(kinds[p->region]), p->label);
            else if (p->style == 1)
                fprintf(out,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"#f28e2b\" "
                        "stroke-width=\"1.5\" class=\"pu\"><title>%s</title></circle>\n",
                        x, y, p->label);
            else
                fprintf(out,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"#2ca02c\" "
                        "class=\"pm\"><title>%s measured</title></rect>\n",
                        x - 4, y - 4, p->label);
        }
    for (int style = 0; style < 2; style++)
        for (unsigned i = 0; i < n; i++) {
            const svg_pt *p = &pts[i];
            double x, y, w = CHAR_W * (double)strlen(p->label);
            if (p->style != style) continue;
            point_xy(a, p, &x, &y);
            for (int t = 0; t < 8; t++) {
                double lx = x + off[t][0] -
                            (off[t][0] < 0    ? w
                             : off[t][0] == 0 ? w / 2
                                              : 0),
                       ly = y + off[t][1];
                svg_box b = {lx, ly - 10, lx + w, ly + 2};
                if (box_hits(bs, &b)) continue;
                box_add(bs, b.x0, b.y0, b.x1, b.y1);
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\">%s</text>\n", lx, ly,
                        style ? "lu" : "lf", p->label);
                break;
            }
        }
    free(bs);
}

/* The ops of region k as "a, b, ... (N ops)", cut to fit `cap`. */
static void region_ops(const ir_graph *g, const pass_index *ix, uint32_t k, char *buf, size_t cap) {
    size_t n = 0;
    unsigned cnt = 0;
    buf[0] = 0;
    for (uint32_t j = ix->rstart[k]; j < ix->rstart[k + 1]; j++) {
        ir_id i = ix->rids[j];
        if (!pass_is_compute((ir_op)g->nodes[i].op) && g->regions[k].kind != IR_RK_COPY) continue;
        cnt++;
        if (cnt <= 3 && n + 2 < cap) {
            char nm[32];
            if (g->nodes[i].name)
                snprintf(nm, sizeof nm, "%s", ir_str(g, g->nodes[i].name));
            else
                snprintf(nm, sizeof nm, "%%%u", i);
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", cnt > 1 ? ", " : "", nm);
        }
    }
    if (cnt > 3 && n + 2 < cap) snprintf(buf + n, cap - n, " +%u", cnt - 3);
}

/* The table of fused kernels right of the roofline; returns its bottom. */
static int draw_table(const pass_rep *r, const pass_measured *m, FILE *out) {
    const ir_graph *g = r->g;
    int y = PY + 10;
    static const int col[5] = {13, 60, 140, 210, 262}; /* kernel, kind, pred_us, meas_us, ops */
    bool meas = m && m->us;
    int opsx = meas ? col[4] : col[3];
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" class=\"h\">kernel</text><text x=\"%d\" y=\"%d\" "
            "class=\"h\">kind</text>"
            "<text x=\"%d\" y=\"%d\" class=\"h\" text-anchor=\"end\">pred us</text>",
            TX + col[0], y, TX + col[1], y, TX + col[2] + 40, y);
    if (meas)
        fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"h\" text-anchor=\"end\">meas us</text>",
                TX + col[3] + 40, y);
    fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"h\">ops</text>\n", TX + opsx + 10, y);
    for (uint32_t k = 0; k < g->nregions; k++) {
        const pass_cost *pc = &r->cost[k];
        char ops[64];
        y += ROW;
        region_ops(g, &r->ix, k, ops, meas ? 14 : 30);
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"9\" height=\"9\" fill=\"%s\"/>", TX, y - 9,
                kind_colour(g->regions[k].kind));
        fprintf(out,
                "<text x=\"%d\" y=\"%d\" class=\"m\">k%u</text><text x=\"%d\" y=\"%d\" "
                "class=\"m\">%s</text>",
                TX + col[0], y, k, TX + col[1], y,
                ir_region_kind_name((ir_region_kind)g->regions[k].kind));
        if (pc->concrete)
            fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"m\" text-anchor=\"end\">%.2f</text>",
                    TX + col[2] + 40, y, pc->predicted_us);
        if (meas && k < m->n && m->us[k] > 0)
            fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"m\" text-anchor=\"end\">%.2f</text>",
                    TX + col[3] + 40, y, m->us[k]);
        fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"m\">", TX + opsx + 10, y);
        xml_text(out, ops);
        fputs("</text>\n", out);
    }
    y += ROW + 6;
    fprintf(out,
            "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"#4e79a7\" stroke=\"#000\" "
            "stroke-width=\"0.6\"/>"
            "<text x=\"%d\" y=\"%d\" class=\"t\">fused plan, predicted (kN; colour: kind)</text>\n",
            TX + 5, y - 4, TX + 16, y);
    y += ROW;
    fprintf(out,
            "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"none\" stroke=\"#f28e2b\" "
            "stroke-width=\"1.5\"/>"
            "<text x=\"%d\" y=\"%d\" class=\"t\">unfused plan (--no-fuse), predicted (uN)</text>\n",
            TX + 5, y - 4, TX + 16, y);
    if (m && m->us) {
        y += ROW;
        fprintf(out,
                "<rect x=\"%d\" y=\"%d\" width=\"8\" height=\"8\" fill=\"#2ca02c\"/>"
                "<text x=\"%d\" y=\"%d\" class=\"t\">measured (both plans; dotted to its "
                "prediction)</text>\n",
                TX + 1, y - 8, TX + 16, y);
    }
    return y;
}

/* A round step for about `n` ticks over [0, span]. */
static double nice_step(double span, int n) {
    double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* One timeline row: kernels back to back, each after `gap` us of launch
 * overhead, durations dur[k] (us); bars labelled where the name fits. */
static void draw_lane(const ir_graph *g, const double *dur, uint32_t n, double gap,
                      const char *prefix, const char *title, double x0, double scale, int y,
                      FILE *out) {
    double t = 0;
    fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" class=\"t\">", x0 - 6, y + 13);
    xml_text(out, title);
    fputs("</text>\n", out);
    for (uint32_t k = 0; k < n; k++) {
        double st = t + gap, w = dur[k] * scale;
        char nm[16];
        if (w < 0.8) w = 0.8;
        snprintf(nm, sizeof nm, "%s%u", prefix, k);
        fprintf(out,
                "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"18\" fill=\"%s\" "
                "class=\"bar\"><title>%s %s %.3f us</title></rect>\n",
                x0 + st * scale, y, w, kind_colour(g->regions[k].kind), nm,
                ir_region_kind_name((ir_region_kind)g->regions[k].kind), dur[k]);
        if (w >= CHAR_W * (double)strlen(nm) + 4)
            fprintf(out,
                    "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\" class=\"bl\">%s</text>\n",
                    x0 + st * scale + w / 2, y + 13, nm);
        t = st + dur[k];
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%d\" class=\"t\">%.2f us</text>\n", x0 + t * scale + 4,
            y + 13, t);
}

/* Total of one lane: n gaps plus the durations. */
static double lane_total(const double *dur, uint32_t n, double gap) {
    double t = 0;
    for (uint32_t k = 0; k < n; k++) t += gap + dur[k];
    return t;
}

/* The timelines below the roofline, starting at y; returns the bottom. */
static int draw_timelines(const pass_rep *r, const pass_measured *m, int y, FILE *out) {
    const ir_graph *g = r->g, *ug = r->un_g;
    double gap = r->gpu->launch_us, x0 = 190, width = W - x0 - 90, tmax;
    double *fd = ir_xcalloc(g->nregions + 1, sizeof *fd),
           *ud = ir_xcalloc(ug->nregions + 1, sizeof *ud);
    int lanes = 2 + (m && m->us) + (m && m->un_us);
    fprintf(out,
            "<text x=\"20\" y=\"%d\" class=\"h\">timeline (each kernel starts %.2f us of launch "
            "overhead after the previous one; colour: kind)</text>\n",
            y, gap);
    if (!r->concrete || !r->un_concrete) {
        fprintf(out,
                "<text x=\"20\" y=\"%d\" class=\"t\">not available: sizes are symbolic (bind them "
                "with -D, or call the program on arrays)</text>\n",
                y + 20);
        free(fd);
        free(ud);
        return y + 30;
    }
    for (uint32_t k = 0; k < g->nregions; k++) fd[k] = r->cost[k].roofline_us;
    for (uint32_t k = 0; k < ug->nregions; k++) ud[k] = r->un_cost[k].roofline_us;
    tmax = lane_total(fd, g->nregions, gap);
    if (lane_total(ud, ug->nregions, gap) > tmax) tmax = lane_total(ud, ug->nregions, gap);
    if (m && m->us && lane_total(m->us, m->n, 0) > tmax) tmax = lane_total(m->us, m->n, 0);
    if (m && m->un_us && lane_total(m->un_us, m->un_n, 0) > tmax)
        tmax = lane_total(m->un_us, m->un_n, 0);
    if (tmax <= 0) tmax = 1;
    double scale = width / tmax, step = nice_step(tmax, 8);
    int ytop = y + 12, ybot = ytop + lanes * 26;
    for (double t = 0; t <= tmax * 1.0001; t += step) {
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>\n",
                x0 + t * scale, ytop, x0 + t * scale, ybot);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" class=\"t\">%g</text>\n",
                x0 + t * scale, ybot + 14, t);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" class=\"a\">time (us)</text>\n",
            x0 + width / 2, ybot + 30);
    int ly = ytop + 4;
    draw_lane(g, fd, g->nregions, gap, "k", "fused, predicted", x0, scale, ly, out);
    if (m && m->us)
        draw_lane(g, m->us, m->n < g->nregions ? m->n : g->nregions, 0, "k", "fused, measured", x0,
                  scale, ly += 26, out);
    draw_lane(ug, ud, ug->nregions, gap, "u", "unfused, predicted", x0, scale, ly += 26, out);
    if (m && m->un_us)
        draw_lane(ug, m->un_us, m->un_n < ug->nregions ? m->un_n : ug->nregions, 0, "u",
                  "unfused, measured", x0, scale, ly += 26, out);
    free(fd);
    free(ud);
    return ybot + 40;
}

bool pass_report_svg(const ir_graph *g, pass_ctx *c, const pass_measured *m, FILE *out) {
    pass_rep r;
    if (!pass_rep_build(g, c, &r)) return false;
    const pass_gpu *gp = r.gpu;
    unsigned cap = 2 * (g->nregions + r.un_g->nregions) + 2, n = 0;
    svg_pt *pts = ir_xcalloc(cap, sizeof *pts);
    int *kinds = ir_xcalloc(g->nregions + r.un_g->nregions + 1, sizeof *kinds);
    n = collect_points(r.cost, g->nregions, 0, m ? m->us : NULL, m ? m->n : 0, pts, n);
    n = collect_points(r.un_cost, r.un_g->nregions, 1, m ? m->un_us : NULL, m ? m->un_n : 0, pts,
                       n);
    for (uint32_t k = 0; k < g->nregions; k++) kinds[k] = g->regions[k].kind;
    svg_axes a;
    choose_axes(gp, pts, n, &a);
    int rows_bottom = PY + 10 + ROW * ((int)g->nregions + 4) + 24;
    int tl_y = (PY + PH + 60 > rows_bottom ? PY + PH + 60 : rows_bottom) + 10;
    int lanes = 2 + (m && m->us) + (m && m->un_us);
    int height = tl_y + 12 + lanes * 26 + 60;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
            "%d\" "
            "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            W, height, W, height);
    fputs("<style>.t{font-size:11px;fill:#333}.a{font-size:12px;fill:#111}.h{font-size:12px;font-"
          "weight:bold;"
          "fill:#111}.m{font-size:11px;fill:#222;"
          "font-family:DejaVu Sans Mono,monospace}.c{font-size:11px;fill:#222;font-style:italic}"
          ".lf{font-size:11px;fill:#000;font-weight:bold}.lu{font-size:10px;fill:#c0661a}.bl{font-"
          "size:10px;fill:#fff}"
          "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
          out);
    fputs("<text x=\"20\" y=\"24\" style=\"font-size:15px;font-weight:bold\">", out);
    xml_text(out, g->name ? g->name : "program");
    fprintf(out, ": roofline on %s (HBM %.0f GB/s)</text>\n", gp->name, gp->hbm_GBps);
    fprintf(out, "<text x=\"20\" y=\"44\" class=\"t\">%u kernels fused, %u unfused", g->nregions,
            r.un_kernels);
    if (r.concrete && r.un_concrete)
        fprintf(out,
                "; predicted %.2f us fused, %.2f us unfused; HBM bytes %.4g fused, %.4g unfused",
                r.us, r.un_us, r.b, r.un_b);
    if (m && m->label) {
        fputs("; ", out);
        xml_text(out, m->label);
    }
    fputs("</text>\n", out);
    draw_grid(&a, out);
    draw_ceiling(&a, gp->hbm_GBps, gp->peak_TFLOPs[IR_F32], "f32 peak", "", out);
    draw_ceiling(&a, gp->hbm_GBps, gp->peak_TFLOPs[IR_BF16], "bf16/f16 tensor peak",
                 " stroke-dasharray=\"6 3\"", out);
    if (!r.concrete)
        fprintf(out,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"a\">sizes are symbolic: "
                "bind the dims with -D to place the kernels</text>\n",
                PX + PW / 2, PY + PH / 2);
    /* measured points link to their predicted ones */
    for (unsigned i = 0; i < n; i++)
        if (pts[i].style == 2 && i > 0) {
            double x1, y1, x2, y2;
            point_xy(&a, &pts[i - 1], &x1, &y1);
            point_xy(&a, &pts[i], &x2, &y2);
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#2ca02c\" "
                    "stroke-dasharray=\"2 2\"/>\n",
                    x1, y1, x2, y2);
        }
    draw_points(&a, pts, n, kinds, out);
    draw_table(&r, m, out);
    draw_timelines(&r, m, tl_y, out);
    fputs("</svg>\n", out);
    free(pts);
    free(kinds);
    pass_rep_free(&r);
    return !ferror(out);
}
