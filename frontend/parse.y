/* parse.y - pure parser for .tx source (spec section 1). Builds the AST of
 * frontend.h in the context's arena. The first error wins: the parse stops
 * there. Expression nesting is counted in the actions (fe_expr.depth). */
%define api.pure full
%define api.prefix {fe_yy}
%define parse.error custom
%define parse.lac full
%locations
%param {void *scanner}
%parse-param {fe_pctx *ctx}

%code requires {
#include "frontend.h"

/* Scanner and parser state for one source text. */
typedef struct fe_pctx {
    fe_arena *a;
    tx_diag *d;
    fe_program *prog;
    bool prelude;  /* functions parsed are the prelude's */
    bool failed;   /* an error was reported already */
    unsigned line, col;
    int depth;     /* open ( and [ */
    char tok[48];  /* text of the last token */
    char prevtok[48]; /* text of the token before it */
    fe_loc tokloc, prevloc; /* their locations */
} fe_pctx;

/* A growable array of pointers in the arena. */
typedef struct fe_vec {
    void **v;
    unsigned n, cap;
} fe_vec;

typedef struct fe_args {
    fe_vec pos, kw;
} fe_args;
}

%code provides {
int fe_yylex(FE_YYSTYPE *lval, FE_YYLTYPE *lloc, void *scanner);
const char *fe_token_name(int kind);
}

%union {
    int64_t i;
    double f;
    const char *s;
    fe_expr *e;
    fe_type *t;
    fe_dimx *dm;
    fe_param *p;
    fe_stmt *st;
    fe_func *fn;
    fe_vec v;
    fe_args args;
    fe_kwarg *kw;
}

%code {
#include <string.h>

static void fe_yyerror(FE_YYLTYPE *l, void *scanner, fe_pctx *ctx, const char *msg);
static void vpush(fe_pctx *c, fe_vec *v, void *x);
static void addfunc(fe_pctx *c, fe_func *f);
static fe_loc at(FE_YYLTYPE l);
static fe_expr *mk(fe_pctx *c, fe_expr_kind k, FE_YYLTYPE l);
static fe_expr *mkbin(fe_pctx *c, int op, FE_YYLTYPE l, fe_expr *a, fe_expr *b);
static fe_expr *mkneg(fe_pctx *c, FE_YYLTYPE l, fe_expr *a);
static fe_expr *mkcall(fe_pctx *c, const char *name, FE_YYLTYPE l, fe_args *args);
static fe_expr *mktuple(fe_pctx *c, FE_YYLTYPE l, fe_vec *v);
static bool too_deep(fe_pctx *c, const fe_expr *e);
static fe_type *mktype(fe_pctx *c, const char *dt, FE_YYLTYPE l, fe_vec *dims);
static fe_stmt *mkstmt(fe_pctx *c, fe_stmt_kind k, FE_YYLTYPE l, fe_vec *names, fe_vec *locs, fe_vec *vals);
static fe_func *mkfunc(fe_pctx *c, const char *name, FE_YYLTYPE l, fe_vec *params, fe_vec *rets, bool tuple, fe_vec *body);

#define CHECK(e) do { if (!(e)) YYABORT; } while (0)
#define DEEP(e) do { if (too_deep(ctx, (e))) YYABORT; } while (0)
}

%token FN "'fn'" RETURN "'return'" ARROW "'->'" POW "'**'" LE "'<='" GE "'>='" EQ "'=='" NE "'!='"
%token NL "newline" LEXERR "lexical error"
%token <s> NAME "name"
%token <i> INT "integer" TRUE "'true'" FALSE "'false'"
%token <f> FLOAT "float"

%type <e> expr conj cmp arith term unary power postfix atom
%type <t> type
%type <dm> dim
%type <p> param
%type <st> stmt
%type <fn> func
%type <v> params params_opt dims dims_opt types exprs tuple_tail stmts body
%type <args> args args_opt names
%type <kw> kwarg

%%

program: nls_opt funcs ;

funcs: %empty
     | funcs func nls_opt { addfunc(ctx, $2); }
     ;

nls_opt: %empty | nls_opt NL ;

func: FN NAME '(' params_opt ')' nls_opt '{' body '}'
        { $$ = mkfunc(ctx, $2, @2, &$4, NULL, false, &$8); }
    | FN NAME '(' params_opt ')' nls_opt ARROW nls_opt type nls_opt '{' body '}'
        { fe_vec r = {0}; vpush(ctx, &r, $9); $$ = mkfunc(ctx, $2, @2, &$4, &r, false, &$12); }
    | FN NAME '(' params_opt ')' nls_opt ARROW nls_opt '(' types ')' nls_opt '{' body '}'
        { $$ = mkfunc(ctx, $2, @2, &$4, &$10, true, &$14); }
    ;

params_opt: %empty { memset(&$$, 0, sizeof $$); }
          | params { $$ = $1; }
          | params ',' { $$ = $1; }
          ;
params: param { memset(&$$, 0, sizeof $$); vpush(ctx, &$$, $1); }
      | params ',' param { $$ = $1; vpush(ctx, &$$, $3); }
      ;
param: NAME { $$ = fe_alloc(ctx->a, sizeof *$$); $$->name = $1; $$->loc = at(@1); }
     | NAME ':' type { $$ = fe_alloc(ctx->a, sizeof *$$); $$->name = $1; $$->loc = at(@1); $$->type = $3; }
     | NAME '=' expr { $$ = fe_alloc(ctx->a, sizeof *$$); $$->name = $1; $$->loc = at(@1); $$->dflt = $3; }
     ;

type: NAME '[' dims_opt ']' { $$ = mktype(ctx, $1, @1, &$3); CHECK($$); } ;
types: type { memset(&$$, 0, sizeof $$); vpush(ctx, &$$, $1); }
     | types ',' type { $$ = $1; vpush(ctx, &$$, $3); }
     ;
dims_opt: %empty { memset(&$$, 0, sizeof $$); }
        | dims { $$ = $1; }
        ;
dims: dim { memset(&$$, 0, sizeof $$); vpush(ctx, &$$, $1); }
    | dims ',' dim { $$ = $1; vpush(ctx, &$$, $3); }
    ;
dim: INT { $$ = fe_alloc(ctx->a, sizeof *$$); $$->value = $1; $$->loc = at(@1); }
   | NAME { $$ = fe_alloc(ctx->a, sizeof *$$); $$->name = $1; $$->loc = at(@1); }
   ;

body: seps_opt { memset(&$$, 0, sizeof $$); }
    | seps_opt stmts seps_opt { $$ = $2; }
    ;
seps_opt: %empty | seps ;
seps: sep | seps sep ;
sep: NL | ';' ;
stmts: stmt { memset(&$$, 0, sizeof $$); vpush(ctx, &$$, $1); }
     | stmts seps stmt { $$ = $1; vpush(ctx, &$$, $3); }
     ;

stmt: names '=' expr
        { fe_vec v = {0}; vpush(ctx, &v, $3);
          $$ = mkstmt(ctx, FE_S_ASSIGN, @1, &$1.pos, &$1.kw, &v); }
    | RETURN exprs { $$ = mkstmt(ctx, FE_S_RETURN, @1, NULL, NULL, &$2); }
    ;
names: NAME
        { fe_loc *p = fe_alloc(ctx->a, sizeof *p); *p = at(@1);
          memset(&$$, 0, sizeof $$); vpush(ctx, &$$.pos, (void *)$1); vpush(ctx, &$$.kw, p); }
     | names ',' NAME
        { fe_loc *p = fe_alloc(ctx->a, sizeof *p); *p = at(@3);
          $$ = $1; vpush(ctx, &$$.pos, (void *)$3); vpush(ctx, &$$.kw, p); }
     ;

exprs: expr { memset(&$$, 0, sizeof $$); vpush(ctx, &$$, $1); }
     | exprs ',' expr { $$ = $1; vpush(ctx, &$$, $3); }
     ;

expr: conj
    | expr '|' conj { $$ = mkbin(ctx, FE_OP_OR, @2, $1, $3); DEEP($$); }
    ;
conj: cmp
    | conj '&' cmp { $$ = mkbin(ctx, FE_OP_AND, @2, $1, $3); DEEP($$); }
    ;
cmp: arith
    | arith '<' arith { $$ = mkbin(ctx, FE_OP_LT, @2, $1, $3); DEEP($$); }
    | arith LE arith { $$ = mkbin(ctx, FE_OP_LE, @2, $1, $3); DEEP($$); }
    | arith '>' arith { $$ = mkbin(ctx, FE_OP_GT, @2, $1, $3); DEEP($$); }
    | arith GE arith { $$ = mkbin(ctx, FE_OP_GE, @2, $1, $3); DEEP($$); }
    | arith EQ arith { $$ = mkbin(ctx, FE_OP_EQ, @2, $1, $3); DEEP($$); }
    | arith NE arith { $$ = mkbin(ctx, FE_OP_NE, @2, $1, $3); DEEP($$); }
    ;
arith: term
     | arith '+' term { $$ = mkbin(ctx, FE_OP_ADD, @2, $1, $3); DEEP($$); }
     | arith '-' term { $$ = mkbin(ctx, FE_OP_SUB, @2, $1, $3); DEEP($$); }
     ;
term: unary
    | term '*' unary { $$ = mkbin(ctx, FE_OP_MUL, @2, $1, $3); DEEP($$); }
    | term '/' unary { $$ = mkbin(ctx, FE_OP_DIV, @2, $1, $3); DEEP($$); }
    | term '@' unary { $$ = mkbin(ctx, FE_OP_MATMUL, @2, $1, $3); DEEP($$); }
    ;
unary: power
     | '-' unary { $$ = mkneg(ctx, @1, $2); DEEP($$); }
     | '~' unary { $$ = mkneg(ctx, @1, $2); $$->kind = FE_E_NOT; DEEP($$); }
     ;
power: postfix
     | postfix POW unary { $$ = mkbin(ctx, FE_OP_POW, @2, $1, $3); DEEP($$); }
     ;
postfix: atom
       | NAME '(' args_opt ')' { $$ = mkcall(ctx, $1, @1, &$3); DEEP($$); }
       ;
atom: INT { $$ = mk(ctx, FE_E_INT, @1); $$->ival = $1; }
    | FLOAT { $$ = mk(ctx, FE_E_FLOAT, @1); $$->fval = $1; }
    | TRUE { $$ = mk(ctx, FE_E_BOOL, @1); $$->ival = 1; }
    | FALSE { $$ = mk(ctx, FE_E_BOOL, @1); $$->ival = 0; }
    | NAME { $$ = mk(ctx, FE_E_NAME, @1); $$->name = $1; }
    | '(' expr ')' { $$ = $2; }
    | '(' ')' { fe_vec v = {0}; $$ = mktuple(ctx, @1, &v); }
    | '(' expr ',' ')' { fe_vec v = {0}; vpush(ctx, &v, $2); $$ = mktuple(ctx, @1, &v); DEEP($$); }
    | '(' expr ',' tuple_tail ')'
        { fe_vec v = {0}; vpush(ctx, &v, $2);
          for (unsigned i = 0; i < $4.n; i++) vpush(ctx, &v, $4.v[i]);
          $$ = mktuple(ctx, @1, &v); DEEP($$); }
    ;
tuple_tail: exprs { $$ = $1; }
          | exprs ',' { $$ = $1; }
          ;

args_opt: %empty { memset(&$$, 0, sizeof $$); }
        | args { $$ = $1; }
        | args ',' { $$ = $1; }
        ;
args: expr { memset(&$$, 0, sizeof $$); vpush(ctx, &$$.pos, $1); }
    | kwarg { memset(&$$, 0, sizeof $$); vpush(ctx, &$$.kw, $1); }
    | args ',' expr
        { $$ = $1;
          if ($$.kw.n) {
              fe_yyerror(&@3, scanner, ctx, "positional argument after keyword argument");
              YYABORT;
          }
          vpush(ctx, &$$.pos, $3); }
    | args ',' kwarg { $$ = $1; vpush(ctx, &$$.kw, $3); }
    ;
kwarg: NAME '=' expr { $$ = fe_alloc(ctx->a, sizeof *$$); $$->name = $1; $$->loc = at(@1); $$->val = $3; } ;

%%

/* Reports the first error only; later reports (after a lexical error) are
 * dropped. A parser stack overflow can only come from nesting. */
static void fe_yyerror(FE_YYLTYPE *l, void *scanner, fe_pctx *ctx, const char *msg) {
    (void)scanner;
    if (ctx->failed) return;
    ctx->failed = true;
    if (!strcmp(msg, "memory exhausted"))
        tx_error_at(ctx->d, (unsigned)l->first_line, (unsigned)l->first_column,
                    "nesting depth exceeds the limit of %d", IR_MAX_NEST);
    else
        tx_error_at(ctx->d, (unsigned)l->first_line, (unsigned)l->first_column, "%s", msg);
}

/* The found token as users see it: its text in quotes, or a word for
 * newline and end of file. */
static void found_str(const fe_pctx *c, yysymbol_kind_t tok, char *buf, size_t cap) {
    if (tok == YYSYMBOL_YYEOF) snprintf(buf, cap, "end of file");
    else if (tok == YYSYMBOL_NL) snprintf(buf, cap, "newline");
    else snprintf(buf, cap, "'%s'", c->tok);
}

/* What a Python user writes that tx does not have, and what to write. */
static const char *python_hint(const char *word) {
    if (!strcmp(word, "if") || !strcmp(word, "else") || !strcmp(word, "elif"))
        return "is not supported: tx has no control flow; select elementwise with where(cond, a, b)";
    if (!strcmp(word, "for") || !strcmp(word, "while"))
        return "is not supported: tx has no loops; write the operation on whole tensors (reductions: sum(x, axis=A))";
    if (!strcmp(word, "def")) return "is not tx: define functions with 'fn NAME(PARAMS) { ... }'";
    if (!strcmp(word, "lambda") || !strcmp(word, "import") || !strcmp(word, "class"))
        return "is not supported in tx";
    if (!strcmp(word, "and")) return "is not tx: write a & b on bool tensors";
    if (!strcmp(word, "or")) return "is not tx: write a | b on bool tensors";
    if (!strcmp(word, "not")) return "is not tx: write ~c on bool tensors";
    if (!strcmp(word, "is") || !strcmp(word, "in")) return "is not tx: compare with == or !=";
    return NULL;
}

/* A message for the syntax errors users coming from Python and PyTorch
 * make first (indexing, `if`, `for`, `def`), at the offending token; false
 * when the error is another one. */
static bool python_error(const yypcontext_t *yc, fe_pctx *ctx, yysymbol_kind_t tok) {
    const FE_YYLTYPE *l = yypcontext_location(yc);
    if (!strcmp(yysymbol_name(tok), "'['") &&
        (!strcmp(ctx->prevtok, "(") || !strcmp(ctx->prevtok, ",") || !strcmp(ctx->prevtok, "=") ||
         !strcmp(ctx->prevtok, "return"))) {
        ctx->failed = true;
        tx_error_at(ctx->d, (unsigned)l->first_line, (unsigned)l->first_column,
                    "lists are not supported: write a tuple, (a, b) (one element: (a,))");
        return true;
    }
    if (!strcmp(yysymbol_name(tok), "'['")) {
        ctx->failed = true;
        tx_error_at(ctx->d, (unsigned)l->first_line, (unsigned)l->first_column,
                    "indexing is not supported: for x[i] write slice(x, axis=A, start=I, stop=I + 1) "
                    "(reshape drops the axis); for a mask, where(cond, x, y)");
        return true;
    }
    const char *h;
    if (tok == YYSYMBOL_NAME && (h = python_hint(ctx->tok))) {
        ctx->failed = true;
        tx_error_at(ctx->d, (unsigned)l->first_line, (unsigned)l->first_column, "'%s' %s", ctx->tok, h);
        return true;
    }
    if ((h = python_hint(ctx->prevtok))) {
        ctx->failed = true;
        tx_error_at(ctx->d, ctx->prevloc.line, ctx->prevloc.col, "'%s' %s", ctx->prevtok, h);
        return true;
    }
    return false;
}

/* "expected X, Y or Z, found 'w'" when few tokens fit; "expected ')'"
 * inside an open bracket that may close here; else "unexpected 'w'". */
static int yyreport_syntax_error(const yypcontext_t *yc, void *scanner, fe_pctx *ctx) {
    enum { NEXP = 64 };
    yysymbol_kind_t exp[NEXP];
    int n = yypcontext_expected_tokens(yc, exp, NEXP);
    yysymbol_kind_t tok = yypcontext_token(yc);
    if (tok == YYSYMBOL_LEXERR || ctx->failed) {
        ctx->failed = true;
        return 0;
    }
    if (python_error(yc, ctx, tok)) return 0;
    char found[96], msg[512];
    found_str(ctx, tok, found, sizeof found);
    bool close = false, operand = false;
    for (int i = 0; i < n; i++) {
        close |= ctx->depth > 0 && !strcmp(yysymbol_name(exp[i]), "')'");
        operand |= !strcmp(yysymbol_name(exp[i]), "'+'");
    }
    bool cmp = tok == YYSYMBOL_LE || tok == YYSYMBOL_GE || tok == YYSYMBOL_EQ || tok == YYSYMBOL_NE ||
               !strcmp(yysymbol_name(tok), "'<'") || !strcmp(yysymbol_name(tok), "'>'");
    if (cmp && operand) {
        snprintf(msg, sizeof msg, "comparisons cannot be chained; use parentheses");
    } else if (n > 0 && n <= 3) {
        size_t k = (size_t)snprintf(msg, sizeof msg, "expected ");
        for (int i = 0; i < n; i++)
            k += (size_t)snprintf(msg + k, sizeof msg - k, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                                  yysymbol_name(exp[i]));
        snprintf(msg + k, sizeof msg - k, ", found %s", found);
    } else if (close) {
        snprintf(msg, sizeof msg, "expected ')', found %s", found);
    } else {
        snprintf(msg, sizeof msg, "unexpected %s", found);
    }
    fe_yyerror((FE_YYLTYPE *)yypcontext_location(yc), scanner, ctx, msg);
    return 0;
}

/* Appends x to v (arena storage; old arrays are left to the arena). */
static void vpush(fe_pctx *c, fe_vec *v, void *x) {
    if (v->n == v->cap) {
        unsigned cap = v->cap ? 2 * v->cap : 4;
        void **nv = fe_alloc(c->a, cap * sizeof *nv);
        if (v->n) memcpy(nv, v->v, v->n * sizeof *nv);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
}

/* Appends f to the program's function table. */
static void addfunc(fe_pctx *c, fe_func *f) {
    fe_program *p = c->prog;
    if (p->nfuncs == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 8;
        fe_func **nf = fe_alloc(c->a, p->cap * sizeof *nf);
        if (p->nfuncs) memcpy(nf, p->funcs, p->nfuncs * sizeof *nf);
        p->funcs = nf;
    }
    p->funcs[p->nfuncs++] = f;
}

/* The start of a bison location. */
static fe_loc at(FE_YYLTYPE l) {
    fe_loc r = {(unsigned)l.first_line, (unsigned)l.first_column};
    return r;
}

/* A zeroed expression node of kind k at l (depth 0: an atom). */
static fe_expr *mk(fe_pctx *c, fe_expr_kind k, FE_YYLTYPE l) {
    fe_expr *e = fe_alloc(c->a, sizeof *e);
    e->kind = (uint8_t)k;
    e->loc = at(l);
    return e;
}

/* Depth of a node with the given children: 1 + the deepest child, saturating. */
static uint16_t depth_of(fe_expr *const *kids, unsigned n, const fe_kwarg *kw, unsigned nkw) {
    unsigned d = 0;
    for (unsigned i = 0; i < n; i++) d = kids[i]->depth > d ? kids[i]->depth : d;
    for (unsigned i = 0; i < nkw; i++) d = kw[i].val->depth > d ? kw[i].val->depth : d;
    return (uint16_t)(d >= 60000 ? 60000 : d + 1);
}

/* True (after reporting) when `e` nests deeper than the language allows. */
static bool too_deep(fe_pctx *c, const fe_expr *e) {
    if (e->depth <= IR_MAX_NEST) return false;
    if (!c->failed)
        tx_error_at(c->d, e->loc.line, e->loc.col, "nesting depth exceeds the limit of %d", IR_MAX_NEST);
    c->failed = true;
    return true;
}

/* a OP b at the operator's location l. */
static fe_expr *mkbin(fe_pctx *c, int op, FE_YYLTYPE l, fe_expr *a, fe_expr *b) {
    fe_expr *e = mk(c, FE_E_BIN, l);
    e->op = (uint8_t)op;
    e->kids = fe_alloc(c->a, 2 * sizeof *e->kids);
    e->kids[0] = a;
    e->kids[1] = b;
    e->nkids = 2;
    e->depth = depth_of(e->kids, 2, NULL, 0);
    return e;
}

/* Unary minus at l (the caller may turn it into FE_E_NOT). */
static fe_expr *mkneg(fe_pctx *c, FE_YYLTYPE l, fe_expr *a) {
    fe_expr *e = mk(c, FE_E_NEG, l);
    e->kids = fe_alloc(c->a, sizeof *e->kids);
    e->kids[0] = a;
    e->nkids = 1;
    e->depth = depth_of(e->kids, 1, NULL, 0);
    return e;
}

/* name(args) at the callee name's location. */
static fe_expr *mkcall(fe_pctx *c, const char *name, FE_YYLTYPE l, fe_args *args) {
    fe_expr *e = mk(c, FE_E_CALL, l);
    e->name = name;
    e->kids = (fe_expr **)args->pos.v;
    e->nkids = args->pos.n;
    e->nkw = args->kw.n;
    e->kw = fe_alloc(c->a, (args->kw.n + 1) * sizeof *e->kw);
    for (unsigned i = 0; i < args->kw.n; i++) e->kw[i] = *(fe_kwarg *)args->kw.v[i];
    e->depth = depth_of(e->kids, e->nkids, e->kw, e->nkw);
    return e;
}

/* A tuple of the expressions in v, at its '('. */
static fe_expr *mktuple(fe_pctx *c, FE_YYLTYPE l, fe_vec *v) {
    fe_expr *e = mk(c, FE_E_TUPLE, l);
    e->kids = (fe_expr **)v->v;
    e->nkids = v->n;
    e->depth = depth_of(e->kids, e->nkids, NULL, 0);
    return e;
}

/* A type: the name must be a dtype. */
static fe_type *mktype(fe_pctx *c, const char *dt, FE_YYLTYPE l, fe_vec *dims) {
    int k = ir_dtype_parse(dt, strlen(dt));
    if (k < 0) {
        const char *hint = fe_dtype_hint(dt);
        tx_error_at(c->d, (unsigned)l.first_line, (unsigned)l.first_column,
                    "unknown dtype '%.40s%s' (expected f32, f16, bf16, i32 or bool)%s%s", dt,
                    strlen(dt) > 40 ? "..." : "", hint ? ": " : "", hint ? hint : "");
        c->failed = true;
        return NULL;
    }
    fe_type *t = fe_alloc(c->a, sizeof *t);
    t->dtype = k;
    t->loc = at(l);
    t->rank = dims->n;
    t->dims = fe_alloc(c->a, (dims->n + 1) * sizeof *t->dims);
    for (unsigned i = 0; i < dims->n; i++) t->dims[i] = *(fe_dimx *)dims->v[i];
    return t;
}

/* An assignment (names with their locations) or a return, at l. */
static fe_stmt *mkstmt(fe_pctx *c, fe_stmt_kind k, FE_YYLTYPE l, fe_vec *names, fe_vec *locs, fe_vec *vals) {
    fe_stmt *s = fe_alloc(c->a, sizeof *s);
    s->kind = (uint8_t)k;
    s->loc = at(l);
    if (names) {
        s->names = (const char **)names->v;
        s->nnames = names->n;
        s->name_locs = fe_alloc(c->a, (locs->n + 1) * sizeof *s->name_locs);
        for (unsigned i = 0; i < locs->n; i++) s->name_locs[i] = *(fe_loc *)locs->v[i];
    }
    s->vals = (fe_expr **)vals->v;
    s->nvals = vals->n;
    return s;
}

/* A function; rets NULL: no declared return type. */
static fe_func *mkfunc(fe_pctx *c, const char *name, FE_YYLTYPE l, fe_vec *params, fe_vec *rets, bool tuple,
                       fe_vec *body) {
    fe_func *f = fe_alloc(c->a, sizeof *f);
    f->name = name;
    f->loc = at(l);
    f->nparams = params->n;
    f->params = fe_alloc(c->a, (params->n + 1) * sizeof *f->params);
    for (unsigned i = 0; i < params->n; i++) f->params[i] = *(fe_param *)params->v[i];
    if (rets) {
        f->rets = (fe_type **)rets->v;
        f->nrets = rets->n;
    }
    f->ret_tuple = tuple;
    f->body = (fe_stmt **)body->v;
    f->nbody = body->n;
    f->prelude = c->prelude;
    return f;
}

/* Contract in frontend.h. */
const char *fe_token_name(int kind) {
    return yysymbol_name(YYTRANSLATE(kind));
}
