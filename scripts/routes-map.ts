/**
 * docs/routes.md, the route map: every route's method and path, the line of its handler, the
 * service method it calls and the stores that service is given; then where each store's interface
 * and its two implementations live. Read from the source with TypeScript's parser (route files,
 * src/context.ts, the stores' index files), so it follows every move without a list kept by hand.
 *
 *   bun run routes:map           writes docs/routes.md
 *   bun run routes:map --check   fails when docs/routes.md is stale
 *
 * tests/architecture/routes-map.test.ts fails when the file is stale, and checks that the routes
 * read here are exactly the ones the built app serves.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const METHODS = new Set(["get", "post", "put", "patch", "delete", "all"]);
/** Members of the context that are settings or helpers, not a feature's service. */
const NOT_SERVICES = new Set(["config", "now", "id", "log", "limits", "keys", "repos", "db", "pg", "idempotency"]);

export interface RouteEntry {
  method: string;
  path: string;
  /** "src/…/routes.ts:12" */
  handler: string;
  /** "ctx.pipeline.create" */
  calls: string[];
}

interface Parsed {
  file: string;
  source: ts.SourceFile;
}

const parsed = new Map<string, Parsed>();
function parse(root: string, file: string): Parsed {
  const abs = join(root, file);
  const text = readFileSync(abs, "utf8");
  const known = parsed.get(abs);
  if (known && known.source.text === text) return known;
  const p = { file, source: ts.createSourceFile(abs, text, ts.ScriptTarget.Latest, true) };
  parsed.set(abs, p);
  return p;
}

const lineOf = (p: Parsed, node: ts.Node) => p.source.getLineAndCharacterOfPosition(node.getStart(p.source)).line + 1;

function sourceFiles(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(root, p);
    return /\.ts$/.test(e.name) && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

const text = (n: ts.Node | undefined): string | null => (n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : null);

/** The `new Elysia({ prefix })` a chain of `.use(…).get(…)` calls starts from, and its prefix. */
function chainPrefix(expr: ts.Expression): string | null {
  let e: ts.Expression = expr;
  while (true) {
    if (ts.isNewExpression(e)) {
      if (!ts.isIdentifier(e.expression) || e.expression.text !== "Elysia") return null;
      const options = e.arguments?.[0];
      if (!options || !ts.isObjectLiteralExpression(options)) return "";
      const prefix = options.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText() === "prefix") as ts.PropertyAssignment | undefined;
      return prefix ? text(prefix.initializer) ?? "" : "";
    }
    if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) e = e.expression.expression;
    else if (ts.isParenthesizedExpression(e)) e = e.expression;
    else return null;
  }
}

/** `ctx.a.b(…)` calls inside `node`, following calls to functions of the same file (one name, once). */
function contextCalls(p: Parsed, node: ts.Node, seen = new Set<string>()): string[] {
  const out: string[] = [];
  const local = (name: string): ts.Node | undefined => {
    let found: ts.Node | undefined;
    p.source.forEachChild(function find(n): void {
      if (found) return;
      if (ts.isFunctionDeclaration(n) && n.name?.text === name) found = n;
      else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === name && n.initializer && ts.isArrowFunction(n.initializer)) found = n.initializer;
      else n.forEachChild(find);
    });
    return found;
  };
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n)) {
      const chain: string[] = [];
      let e: ts.Expression = n.expression;
      while (ts.isPropertyAccessExpression(e)) {
        chain.unshift(e.name.text);
        e = e.expression;
      }
      if (ts.isIdentifier(e) && e.text === "ctx" && chain.length >= 1 && !NOT_SERVICES.has(chain[0]!)) out.push(`ctx.${chain.join(".")}`);
      // A route that reads a store itself (ctx.repos.users.byId): the store, by its name in `Stores`.
      if (ts.isIdentifier(e) && e.text === "ctx" && chain[0] === "repos" && chain.length >= 3) out.push(`ctx.${chain.join(".")}`);
      if (ts.isIdentifier(n.expression) && !seen.has(n.expression.text)) {
        seen.add(n.expression.text);
        const f = local(n.expression.text);
        if (f) out.push(...contextCalls(p, f, seen));
      }
    }
    n.forEachChild(visit);
  };
  visit(node);
  return [...new Set(out)];
}

/** Every route of every Elysia plugin under src/, in source order. */
export function readRoutes(root: string): RouteEntry[] {
  const routes: RouteEntry[] = [];
  for (const file of sourceFiles(root, "src")) {
    const p = parse(root, file);
    if (!p.source.text.includes("new Elysia(")) continue;
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && METHODS.has(n.expression.name.text)) {
        const path = text(n.arguments[0]);
        const prefix = chainPrefix(n.expression.expression);
        if (path !== null && prefix !== null) {
          const handler = n.arguments[1];
          routes.push({
            method: n.expression.name.text.toUpperCase(),
            path: prefix + path,
            handler: `${file}:${lineOf(p, n.arguments[0]!)}`,
            calls: handler ? contextCalls(p, handler) : [],
          });
        }
      }
      n.forEachChild(visit);
    };
    visit(p.source);
  }
  return routes;
}

interface ServiceInfo {
  /** "src/crm/pipeline-service.ts" */
  file: string;
  /** The create function's node, to find a method's line in. */
  stores: string[];
}

/** Where `name` is imported from in `p`, as a file under the repository. */
function importedFrom(root: string, p: Parsed, name: string): string | null {
  for (const s of p.source.statements) {
    if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
    const b = s.importClause?.namedBindings;
    if (b && ts.isNamedImports(b) && b.elements.some((e) => e.name.text === name)) {
      const spec = s.moduleSpecifier.text;
      const abs = resolve(dirname(join(root, p.file)), spec);
      for (const c of [`${abs}.ts`, join(abs, "index.ts"), abs]) {
        try {
          readFileSync(c);
          return relative(root, c);
        } catch {}
      }
    }
  }
  return null;
}

/** The body of function `name` in `p`. */
function functionBody(p: Parsed, name: string): ts.Block | null {
  for (const s of p.source.statements) if (ts.isFunctionDeclaration(s) && s.name?.text === name && s.body) return s.body;
  return null;
}

/** `const x = …` declarations directly in a block (and its nested blocks), by name. */
function declarations(body: ts.Block): Map<string, ts.VariableDeclaration> {
  const out = new Map<string, ts.VariableDeclaration>();
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n)) {
      if (ts.isIdentifier(n.name)) out.set(n.name.text, n);
      else if (ts.isObjectBindingPattern(n.name)) for (const e of n.name.elements) if (ts.isIdentifier(e.name)) out.set(e.name.text, n);
    }
    if (!ts.isFunctionLike(n)) n.forEachChild(visit);
  };
  body.forEachChild(visit);
  return out;
}

/**
 * What `ctx.a.b.c` names, read from src/context.ts: the service's file and the method's line, and
 * the stores the service was given (`stores.x`, or a name destructured from `stores`).
 */
function contextResolver(root: string) {
  const p = parse(root, "src/context.ts");
  const body = functionBody(p, "createContext");
  if (!body) throw new Error("src/context.ts: createContext not found");
  const decls = declarations(body);
  const returned = body.statements.find(ts.isReturnStatement)?.expression;
  if (!returned || !ts.isObjectLiteralExpression(returned)) throw new Error("src/context.ts: createContext returns no object literal");
  const fromStores = new Map<string, string>();
  for (const [name, d] of decls) {
    const init = d.initializer;
    if (!init) continue;
    if (ts.isObjectBindingPattern(d.name) && init.getText(p.source) === "stores") fromStores.set(name, name);
    else if (ts.isPropertyAccessExpression(init) && init.expression.getText(p.source) === "stores") fromStores.set(name, init.name.text);
  }
  const storesIn = (n: ts.Node): string[] => {
    const out: string[] = [];
    const visit = (x: ts.Node): void => {
      if (ts.isPropertyAccessExpression(x) && ts.isIdentifier(x.expression) && x.expression.text === "stores") out.push(x.name.text);
      else if (ts.isIdentifier(x) && fromStores.has(x.text) && !(ts.isPropertyAssignment(x.parent) && x.parent.name === x)) out.push(fromStores.get(x.text)!);
      x.forEachChild(visit);
    };
    visit(n);
    return out;
  };
  const member = (obj: ts.ObjectLiteralExpression, key: string): ts.Expression | null => {
    for (const prop of obj.properties) {
      if (ts.isPropertyAssignment(prop) && prop.name.getText(p.source) === key) return prop.initializer;
      if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === key) return prop.name;
    }
    return null;
  };
  const deref = (e: ts.Expression | null): ts.Expression | null => {
    let x = e;
    for (let i = 0; x && ts.isIdentifier(x) && i < 5; i++) x = decls.get(x.text)?.initializer ?? null;
    return x;
  };
  const services = new Map<string, ServiceInfo & { create: string }>();
  return (chain: string[]): { service: string; stores: string[] } | null => {
    if (chain[0] === "repos") return { service: `stores.${chain.slice(1).join(".")} (a store, read by the route itself)`, stores: [chain[1]!] };
    let node: ts.Expression | null = returned;
    for (let i = 0; i <= chain.length; i++) {
      node = deref(node);
      if (!node) return null;
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
        const create = node.expression.text;
        const file = importedFrom(root, p, create);
        if (!file) return null;
        const key = `${file}#${create}`;
        let info = services.get(key);
        if (!info) {
          info = { file, create, stores: [...new Set(node.arguments.flatMap(storesIn))].sort() };
          services.set(key, info);
        }
        const method = chain.slice(i).join(".") || chain.join(".");
        const line = i < chain.length ? methodLine(root, file, create, chain[i]!) : methodLine(root, file, create, null);
        return { service: `${file}:${line} (${method})`, stores: info.stores };
      }
      // A member written in the context itself (ping: () => stores.ping()).
      if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return { service: `src/context.ts:${lineOf(p, node)} (${chain.join(".")})`, stores: storesIn(node) };
      if (!ts.isObjectLiteralExpression(node) || i === chain.length) return null;
      node = member(node, chain[i]!);
    }
    return null;
  };
}

/** The line of `method` inside `create` in `file`: its function, or the name that declares it; null: the line of `create`. */
function methodLine(root: string, file: string, create: string, method: string | null): number {
  const p = parse(root, file);
  let fn: ts.Node | undefined;
  p.source.forEachChild(function find(n): void {
    if (fn) return;
    if ((ts.isFunctionDeclaration(n) && n.name?.text === create) || (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === create)) fn = n;
    else n.forEachChild(find);
  });
  if (!fn) return 1;
  let line = lineOf(p, fn);
  if (method === null) return line;
  let best = 0;
  const visit = (n: ts.Node): void => {
    const named =
      (ts.isFunctionDeclaration(n) && n.name?.text === method && 3) ||
      ((ts.isMethodDeclaration(n) || ts.isPropertyAssignment(n)) && n.name.getText(p.source) === method && 2) ||
      (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === method && 2) ||
      (ts.isBindingElement(n) && ts.isIdentifier(n.name) && n.name.text === method && 2) ||
      0;
    if (named > best) {
      best = named;
      line = lineOf(p, n);
    }
    n.forEachChild(visit);
  };
  fn.forEachChild(visit);
  return line;
}

/** Each store of `Stores`: its interface's file, and the SQLite and PostgreSQL files that build it. */
function storeFiles(root: string): Map<string, { iface: string; sqlite: string; postgres: string }> {
  const iface = parse(root, "src/stores/interface.ts");
  const out = new Map<string, { iface: string; sqlite: string; postgres: string }>();
  const decl = iface.source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === "Stores");
  if (!decl) throw new Error("src/stores/interface.ts: interface Stores not found");
  const builders = (file: string, fn: string) => {
    const p = parse(root, file);
    const body = functionBody(p, fn);
    if (!body) throw new Error(`${file}: ${fn} not found`);
    const decls = declarations(body);
    const ret = body.statements.find(ts.isReturnStatement)?.expression;
    const obj = ret && ts.isObjectLiteralExpression(ret) ? ret : null;
    return (key: string): string => {
      let value: ts.Expression | null = null;
      for (const prop of obj?.properties ?? []) {
        if (ts.isPropertyAssignment(prop) && prop.name.getText(p.source) === key) value = prop.initializer;
        if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === key) value = decls.get(key)?.initializer ?? null;
        if (ts.isSpreadAssignment(prop) && !value && decls.has(key)) value = decls.get(key)!.initializer ?? null;
      }
      if (value && ts.isCallExpression(value) && ts.isIdentifier(value.expression)) return importedFrom(root, p, value.expression.text) ?? file;
      return file;
    };
  };
  const sqlite = builders("src/stores/sqlite/index.ts", "createSqliteStores");
  const postgres = builders("src/stores/postgres/index.ts", "createPostgresStores");
  for (const m of decl.members) {
    if (!ts.isPropertySignature(m) || !m.type || !ts.isTypeReferenceNode(m.type)) continue;
    const key = m.name.getText(iface.source);
    const type = m.type.typeName.getText(iface.source);
    const file = importedFrom(root, iface, type);
    if (!file || type === "ServerKeys") continue;
    out.set(key, { iface: `${file} (${type})`, sqlite: sqlite(key), postgres: postgres(key) });
  }
  return out;
}

const METHOD_ORDER = ["GET", "POST", "PUT", "PATCH", "DELETE", "ALL"];

/** docs/routes.md's text. */
export function routesMarkdown(root: string): string {
  const resolveCtx = contextResolver(root);
  const routes = readRoutes(root).sort((a, b) => a.path.localeCompare(b.path) || METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method));
  const stores = storeFiles(root);
  const rows = routes.map((r) => {
    const resolved = r.calls.map((c) => ({ call: c, to: resolveCtx(c.split(".").slice(1)) }));
    const service = resolved.map((x) => (x.to ? x.to.service : `${x.call} (unresolved)`)).join("<br>") || "—";
    const used = [...new Set(resolved.flatMap((x) => x.to?.stores ?? []))].filter((k) => stores.has(k)).sort();
    return `| ${r.method} | \`${r.path}\` | ${r.handler} | ${service} | ${used.join(", ") || "—"} |`;
  });
  const storeRows = [...stores].sort(([a], [b]) => a.localeCompare(b)).map(([k, f]) => `| ${k} | ${f.iface} | ${f.sqlite} | ${f.postgres} |`);
  return [
    "# Routes",
    "",
    "<!-- Generated by `bun run routes:map` (scripts/routes-map.ts); do not edit. tests/architecture/routes-map.test.ts fails when it is stale. -->",
    "",
    "Every route the server answers, by path: the line of its handler, the service method the handler",
    "calls (through the context built in src/context.ts) and the stores that service is given. The",
    "second table says where each store's interface and its SQLite and PostgreSQL implementations live.",
    "The folders and their rules: README, \"Layout\".",
    "",
    "| Method | Path | Handler | Service | Stores |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    "## Stores",
    "",
    "| Store (`stores.…`) | Interface | SQLite | PostgreSQL |",
    "|---|---|---|---|",
    ...storeRows,
    "",
  ].join("\n");
}

if (import.meta.main) {
  const root = resolve(import.meta.dir, "..");
  const target = join(root, "docs/routes.md");
  const want = routesMarkdown(root);
  if (process.argv.includes("--check")) {
    let have = "";
    try {
      have = readFileSync(target, "utf8");
    } catch {}
    if (have !== want) {
      process.stderr.write("docs/routes.md is stale: run `bun run routes:map`\n");
      process.exit(1);
    }
  } else {
    writeFileSync(target, want);
    process.stdout.write(`wrote docs/routes.md (${want.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| Method") && !l.startsWith("| Store")).length} rows)\n`);
  }
}
