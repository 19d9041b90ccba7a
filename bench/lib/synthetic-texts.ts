/**
 * Synthetic texts of the kinds a conversation carries besides short user messages — tool
 * outputs (JSON, log lines) and prose of a few KB — made from a seed, so a bench can count
 * the same texts on every run and fresh ones when it times the counting.
 */

/** A small seeded generator (mulberry32): the same seed, the same texts. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const hex = (random: () => number, n: number) =>
  Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join("");

const NAMES = ["Ada Quill", "Bram Osei", "Chiara Lund", "Dev Patel", "Eun-ji Park", "Farah Nasser", "Goran Ilić"];
const STREETS = ["Harbour Street", "Mill Lane", "Rue des Lilas", "Calle Mayor", "Kastanienallee", "Queen's Road"];
const STATUSES = ["pending", "paid", "shipped", "delivered", "refunded", "cancelled"];
const PRODUCTS = ["USB-C cable 2 m", "Laptop stand", "Noise-cancelling headphones", "Desk lamp", "Webcam 4K"];

function order(random: () => number, i: number) {
  const name = pick(random, NAMES);
  return {
    id: `ord_${hex(random, 12)}`,
    created_at: new Date(
      Date.UTC(2026, 10, 1 + (i % 28), Math.floor(random() * 24), Math.floor(random() * 60)),
    ).toISOString(),
    status: pick(random, STATUSES),
    customer: {
      name,
      email: `${name.toLowerCase().replace(/[^a-z]+/g, ".")}@example.com`,
      address: `${1 + Math.floor(random() * 200)} ${pick(random, STREETS)}`,
    },
    items: Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
      sku: `SKU-${1000 + Math.floor(random() * 9000)}`,
      name: pick(random, PRODUCTS),
      qty: 1 + Math.floor(random() * 4),
      unit_price: Math.round(random() * 20000) / 100,
    })),
    total: Math.round(random() * 50000) / 100,
  };
}

/** Orders as an HTTP API answers them, about `chars` characters; pretty-printed or minified. */
export function jsonOutput(seed: number, chars: number, pretty: boolean): string {
  const random = seeded(seed);
  const orders = [];
  for (let i = 0; ; i++) {
    orders.push(order(random, i));
    const text = JSON.stringify({ orders, next_cursor: hex(random, 16) }, null, pretty ? 2 : undefined);
    if (text.length >= chars) return text;
  }
}

const PATHS = ["/api/v2/orders", "/api/v2/customers", "/api/v2/invoices", "/healthz", "/api/v2/refunds"];
const LEVELS = ["INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"];
const MESSAGES = [
  "request completed",
  "upstream timed out after 3000ms, retrying",
  "cache miss for key",
  "payment provider returned 402",
  "rate limit close: 1180/1200 in window",
];

/** Application log lines, about `chars` characters. */
export function logOutput(seed: number, chars: number): string {
  const random = seeded(seed);
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const at = new Date(Date.UTC(2026, 10, 28, 14, 3, 0, 0) + i * 137 + Math.floor(random() * 100)).toISOString();
    const status = pick(random, [200, 200, 200, 201, 404, 500, 502]);
    const line = `${at} ${pick(random, LEVELS).padEnd(5)} [req ${hex(random, 8)}] ${pick(random, ["GET", "POST", "PUT"])} ${pick(random, PATHS)}/${hex(random, 6)} ${status} ${Math.floor(random() * 900)}ms ip=203.0.113.${Math.floor(random() * 255)} ${pick(random, MESSAGES)}`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n");
}

const PROSE = [
  "The migration moved every customer account to the new billing system over one weekend.",
  "Most invoices matched to the cent, but a few hundred annual plans were charged twice because the renewal job ran in both systems.",
  "Support agents were asked to check each case by hand before issuing a refund, and to note the ticket number on the account.",
  "Refunds usually reach a card within five working days, although some banks take up to ten.",
  "Where a customer had also changed their billing address during the migration, the old address was printed on the invoice.",
  "The fix for the address was deployed on Thursday; invoices issued after that show the address the customer gave.",
  "Customers on the yearly plan keep their discount when they switch, provided they switch before the renewal date.",
  "Exports larger than ten thousand rows are now split into several files, which arrive in one archive by email.",
  "If a team member cannot sign in after the password policy change, an administrator can send a new reset link that lasts a day.",
  "Questions about tax on invoices go to the finance team, who answer within two working days.",
];

/** English prose of a support knowledge base, about `chars` characters, in paragraphs. */
export function prose(seed: number, chars: number): string {
  const random = seeded(seed);
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    const paragraph = Array.from({ length: 3 + Math.floor(random() * 3) }, () => pick(random, PROSE)).join(" ");
    out.push(paragraph);
    length += paragraph.length + 2;
  }
  return out.join("\n\n");
}

const WORLD = [
  "Die Lieferung ist noch nicht angekommen, obwohl die Sendungsverfolgung sie seit Dienstag als zugestellt anzeigt.",
  "Pouvez-vous vérifier si le remboursement des licences annulées a bien été effectué sur ma carte bancaire ?",
  "Necesito cambiar la dirección de facturación de la empresa antes de que se emita la próxima factura.",
  "先週注文した商品がまだ届いていません。追跡番号も無効と表示されます。",
  "我的账户被重复扣费了两次，请帮我查看并退还多收的款项。",
  "Двое сотрудников не могут войти в систему после изменения политики паролей.",
  "비밀번호를 재설정했는데도 로그인이 되지 않습니다.",
  "Il rimborso per i posti annullati non risulta ancora sul mio estratto conto.",
];

/** Messages in German, French, Spanish, Japanese, Chinese, Russian, Korean and Italian, about `chars` characters. */
export function multilingual(seed: number, chars: number): string {
  const random = seeded(seed);
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    const sentence = pick(random, WORLD);
    out.push(sentence);
    length += sentence.length + 1;
  }
  return out.join("\n");
}
