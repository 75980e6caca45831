// The Khronos glTF validator over files given as arguments: one JSON line per file,
// {"file", "errors", "warnings", "messages": [...]}. The package is found under
// $GLTF_VALIDATOR_DIR or build/node/node_modules (`.ci/run` installs it there).
const fs = require("fs");
const path = require("path");
const dir = process.env.GLTF_VALIDATOR_DIR || path.join(__dirname, "..", "build", "node", "node_modules");
const validator = require(path.join(dir, "gltf-validator"));

async function one(file) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
        uri: path.basename(file),
        maxIssues: 0,
        externalResourceFunction: (uri) => new Promise((resolve, reject) => {
            fs.readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)),
                        (err, data) => err ? reject(err.toString()) : resolve(new Uint8Array(data)));
        }),
    });
    const messages = report.issues.messages.map((m) => `${["error", "warning", "info", "hint"][m.severity]} ${m.code}: ${m.message} (${m.pointer || m.offset || ""})`);
    return {file, errors: report.issues.numErrors, warnings: report.issues.numWarnings, messages};
}

(async () => {
    for (const file of process.argv.slice(2)) {
        try {
            console.log(JSON.stringify(await one(file)));
        } catch (e) {
            console.log(JSON.stringify({file, errors: 1, warnings: 0, messages: [`error VALIDATOR_FAILED: ${e}`]}));
        }
    }
})();
