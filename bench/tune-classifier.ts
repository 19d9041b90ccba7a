/**
 * How the classifier's hyper-parameters (softmax.ts SOFTMAX_DEFAULTS) were chosen: domain
 * accuracy on a held-out fifth of CLINC150 train less its unseen split (every fifth row; val and
 * the unseen split, bench/lib/clinc.ts, are never used), with
 * all examples and with 10 per intent, for a small grid of epochs and L2.
 *
 *   npx tsx bench/tune-classifier.ts
 *
 * Data: CLINC150 by Larson et al., 2019, CC BY 3.0.
 */
import { compileClassifier } from "../src/routing/classifier/lexical-classifier";
import { SOFTMAX_DEFAULTS } from "../src/routing/classifier/softmax";
import { CLINC_CREDIT, examplesByDomain, loadClincOrExit, splitHoldout } from "./lib/clinc";

const { learn: train } = splitHoldout(loadClincOrExit().train);
const fit = train.filter((_, i) => i % 5 !== 0);
const held = train.filter((r, i) => i % 5 === 0 && r.domain !== "oos");

console.log(`Classifier hyper-parameters on a held-out fifth of ${CLINC_CREDIT} train.\n`);
console.log(
  `Defaults: epochs ${SOFTMAX_DEFAULTS.epochs}, learning rate ${SOFTMAX_DEFAULTS.learningRate}, L2 ${SOFTMAX_DEFAULTS.l2}.\n`,
);
console.log("| epochs | L2 | accuracy, all examples | accuracy, 10/intent | compile ms (all) |");
console.log("| --- | --- | --- | --- | --- |");
for (const epochs of [6, 8, 12]) {
  for (const l2 of [1e-4, 1e-3, 3e-3]) {
    const cells: string[] = [];
    let ms = 0;
    for (const perIntent of [Infinity, 10]) {
      const sets = [...examplesByDomain(fit, perIntent)].map(([agent, examples]) => ({ agent, examples }));
      const started = performance.now();
      const classifier = compileClassifier(sets, { epochs, l2 });
      if (perIntent === Infinity) ms = performance.now() - started;
      let right = 0;
      for (const r of held) {
        const { probs } = classifier.classify(r.text);
        let best = 0;
        probs.forEach((p, i) => {
          if (p > (probs[best] as number)) best = i;
        });
        if (classifier.agents[best] === r.domain) right++;
      }
      cells.push(`${((100 * right) / held.length).toFixed(2)}%`);
    }
    console.log(`| ${epochs} | ${l2} | ${cells[0]} | ${cells[1]} | ${ms.toFixed(0)} |`);
  }
}
