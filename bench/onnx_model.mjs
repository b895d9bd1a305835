// A tiny ONNX model of scaled dot-product attention, written as protobuf
// bytes by hand (no PyPI, no onnx package): inputs q [T, d], k [T, d],
// v [T, d] float32; output = softmax((q · s) kᵀ) v with s = 1/sqrt(d).
// Nodes: Mul(q, s), Transpose(k), MatMul, Softmax(axis 1, the last), MatMul. Opset 17.

const utf8 = new TextEncoder();

function varint(value) {
  const bytes = [];
  let n = value;
  while (n > 127) {
    bytes.push((n % 128) | 128);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return bytes;
}

const key = (field, wire) => varint(field * 8 + wire);
const int = (field, n) => [...key(field, 0), ...varint(n)];
const bytesField = (field, bytes) => [...key(field, 2), ...varint(bytes.length), ...bytes];
const str = (field, text) => bytesField(field, [...utf8.encode(text)]);
const msg = bytesField;

function floatBytes(values) {
  const buffer = new Uint8Array(4 * values.length);
  const view = new DataView(buffer.buffer);
  values.forEach((x, i) => view.setFloat32(4 * i, x, true));
  return [...buffer];
}

const FLOAT = 1; // TensorProto.DataType and AttributeProto.AttributeType both
const ATTR_INT = 2;
const ATTR_INTS = 7;

function node(opType, inputs, outputs, attributes = []) {
  return [...inputs.flatMap((name) => str(1, name)), ...outputs.flatMap((name) => str(2, name)),
          ...str(3, `${opType}_${outputs[0]}`), ...str(4, opType),
          ...attributes.flatMap((attribute) => msg(5, attribute))];
}

const intAttribute = (name, value) => [...str(1, name), ...int(3, value), ...int(20, ATTR_INT)];
const intsAttribute = (name, values) =>
  [...str(1, name), ...values.flatMap((v) => int(8, v)), ...int(20, ATTR_INTS)];

function valueInfo(name, dims) {
  const shape = dims.flatMap((d) => msg(1, int(1, d)));
  const tensorType = [...int(1, FLOAT), ...msg(2, shape)];
  return [...str(1, name), ...msg(2, msg(1, tensorType))];
}

/** The model's bytes for T tokens of width d.
 */
export function sdpaModel(t, d) {
  const scale = [...str(8, 'scale'), ...int(2, FLOAT), ...bytesField(9, floatBytes([1 / Math.sqrt(d)]))];
  const graph = [
    ...msg(1, node('Mul', ['q', 'scale'], ['qs'])),
    ...msg(1, node('Transpose', ['k'], ['kt'], [intsAttribute('perm', [1, 0])])),
    ...msg(1, node('MatMul', ['qs', 'kt'], ['scores'])),
    ...msg(1, node('Softmax', ['scores'], ['weights'], [intAttribute('axis', 1)])),
    ...msg(1, node('MatMul', ['weights', 'v'], ['output'])),
    ...str(2, 'sdpa'),
    ...msg(5, scale),
    ...msg(11, valueInfo('q', [t, d])),
    ...msg(11, valueInfo('k', [t, d])),
    ...msg(11, valueInfo('v', [t, d])),
    ...msg(12, valueInfo('output', [t, d])),
  ];
  const opset = [...str(1, ''), ...int(2, 17)];
  return new Uint8Array([...int(1, 8), ...str(2, 'attention-bench'), ...msg(7, graph), ...msg(8, opset)]);
}
