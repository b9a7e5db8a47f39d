import ts from 'typescript';

/** The TSDoc comment of each property of `export const <name> = {…}` in a source file, by property name. */
export function propertyDocs(file: string, constName: string): Map<string, string> {
  const source = ts.createSourceFile(file, ts.sys.readFile(file) ?? '', ts.ScriptTarget.ES2022, true);
  const docs = new Map<string, string>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === constName && node.initializer) {
      let initializer: ts.Expression = node.initializer;
      while (ts.isAsExpression(initializer) || ts.isSatisfiesExpression(initializer)) initializer = initializer.expression;
      if (ts.isObjectLiteralExpression(initializer)) {
        for (const property of initializer.properties) {
          if (!property.name || !(ts.isIdentifier(property.name) || ts.isStringLiteral(property.name))) continue;
          const comment = ts
            .getJSDocCommentsAndTags(property)
            .map((doc) => (ts.isJSDoc(doc) ? ts.getTextOfJSDocComment(doc.comment) : ''))
            .join(' ');
          docs.set(property.name.text, (comment ?? '').replace(/\s+/g, ' ').trim());
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (docs.size === 0) throw new Error(`docs generator: no object constant ${constName} in ${file}`);
  return docs;
}

/** The string-literal properties of `export const <name> = {…}` (e.g. a benchmark's name and description), read without running the file. */
export function stringProperties(file: string, constName: string): Map<string, string> {
  const source = ts.createSourceFile(file, ts.sys.readFile(file) ?? '', ts.ScriptTarget.ES2022, true);
  const values = new Map<string, string>();
  const visit = (node: ts.Node) => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.name.text === constName &&
      node.initializer &&
      ts.isObjectLiteralExpression(node.initializer)
    ) {
      for (const property of node.initializer.properties) {
        if (ts.isPropertyAssignment(property) && ts.isIdentifier(property.name) && ts.isStringLiteralLike(property.initializer))
          values.set(property.name.text, property.initializer.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return values;
}
