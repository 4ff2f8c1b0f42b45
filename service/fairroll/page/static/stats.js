// Do the dice look like fair dice? The goodness-of-fit tests of fairroll's auditor's
// report (service/fairroll/audit/report.py, `fairroll verify`), for the page's picture of
// a table's dice: Pearson's chi-square when every face is expected 5 times or more, the
// exact multinomial test when its count vectors are few enough to list, else none.
// Pure (tested under Node against the Python report, count for count).

const EXACT_LIMIT = 200000;

function lgamma(x) {  // Lanczos (g = 7, n = 9), as accurate as a double allows here
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** P(chi-square(df) >= statistic): Q(df / 2, statistic / 2), as the report computes it. */
export function chiSquareP(statistic, df) {
  const a = df / 2, x = statistic / 2;
  if (x <= 0) return 1;
  const front = a * Math.log(x) - x - lgamma(a);
  if (x < a + 1) {
    let term = 1 / a, total = term, k = a;
    for (let i = 0; i < 10000; i++) {
      k += 1;
      term *= x / k;
      total += term;
      if (Math.abs(term) < Math.abs(total) * 1e-15) break;
    }
    return Math.max(0, 1 - total * Math.exp(front));
  }
  const tiny = 1e-300;
  let b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (let i = 1; i < 10000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return Math.min(1, Math.exp(front) * h);
}

function comb(n, k) {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/** The exact multinomial test: the chance of every count vector no likelier than this. */
export function exactMultinomialP(counts) {
  const sides = counts.length, n = counts.reduce((s, c) => s + c, 0);
  const front = lgamma(n + 1) - n * Math.log(sides);
  const logP = (vector) => vector.reduce((s, c) => s - lgamma(c + 1), front);
  const seen = logP(counts) + 1e-9;
  let total = 0;
  const vector = new Array(sides).fill(0);
  (function fill(part, left) {
    if (part === sides - 1) {
      vector[part] = left;
      const p = logP(vector);
      if (p <= seen) total += Math.exp(p);
      return;
    }
    for (let v = 0; v <= left; v++) {
      vector[part] = v;
      fill(part + 1, left - v);
    }
  })(0, n);
  return Math.min(1, total);
}

/** {method, p, statistic?, df?, note?} for face counts (counts[i] is face i + 1). */
export function goodnessOfFit(counts) {
  const sides = counts.length, n = counts.reduce((s, c) => s + c, 0);
  if (sides < 2 || n === 0) return { method: "none", p: null, note: "no dice of more than one face" };
  if (n >= 5 * sides) {
    const expected = n / sides;
    const statistic = counts.reduce((s, c) => s + (c - expected) ** 2, 0) / expected;
    return { method: "chi-square", p: chiSquareP(statistic, sides - 1), statistic, df: sides - 1 };
  }
  if (comb(n + sides - 1, sides - 1) <= EXACT_LIMIT) return { method: "exact", p: exactMultinomialP(counts) };
  return { method: "none", p: null, note: `too few dice to test: ${5 * sides} or more are needed` };
}

/** The test in a player's words. */
export function fitInWords(fit) {
  if (fit.p === null) return fit.note;
  const p = fit.p >= 0.01 ? fit.p.toFixed(2) : fit.p.toPrecision(2);
  const share = fit.p >= 0.01 ? `${Math.round(fit.p * 100)} %` : fit.p >= 0.0001 ? `${(fit.p * 100).toPrecision(2)} %` : "almost never";
  const test = fit.method === "chi-square" ? "chi-square test" : "exact test";
  return `${test}: p = ${p}, fair dice look at least this uneven ${share === "almost never" ? share : `${share} of the time`}`;
}
