// Chains of ONNX operators that exporters emit for one function nnd has as one IR layer (internal
// to the ONNX loader, see onnx_import.h):
//
//   GELU       PyTorch's exact GELU:  x * 0.5 * (1 + erf(x / sqrt 2))
//              Div(x, sqrt 2) or Mul(x, 1/sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5 (the last two
//              in either order, or 0.5 * x computed first)               -> Activation kGeluErf
//   Softsign   PyTorch's Softsign:  x / (1 + |x|)  as Abs -> Add 1 -> Div(x, .)  -> Activation kSoftsign
//   LayerNorm  PyTorch's LayerNorm before opset 17:  ReduceMean -> Sub -> Pow 2 (or Mul by itself)
//              -> ReduceMean -> Add eps -> Sqrt -> Div [-> Mul gamma] [-> Add beta]  -> LayerNorm
//
// Recognition has two steps. find_patterns() looks only at the graph's structure (operators and
// which tensor feeds which; constants on either side of Add and Mul) before anything is lowered,
// and demands that no intermediate tensor is read outside the chain, so the chain's nodes can
// wait and be lowered together at its last node. lower_pattern() then checks the values with
// the constants known: every constant the function fixes (sqrt 2, 1, 0.5, the exponent 2) within
// float tolerance, the same axes on both reductions, and so on. Anything else is refused with the
// node and the value at fault, never lowered to a different function. Every chain contains an
// operator nnd cannot lower on a computed tensor by itself (Erf, Abs, Pow or Sqrt), so a refusal
// here costs no graph that loaded before.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
}

namespace nnd::onnx_import {

class Importer;

enum class PatternKind { kGelu, kSoftsign, kLayerNorm };

// The ONNX operator name nnd gives the function ("Gelu", "Softsign", "LayerNormalization").
const char* pattern_op(PatternKind k);

// One input of one node of a chain.
struct Operand {
  int node = -1;  // index into the graph's nodes
  int slot = -1;  // input index of that node
};

// A constant a pattern fixes, with the value it must have.
struct FixedConstant {
  Operand at;
  double value = 0.0;
  std::string role;  // "the divisor (sqrt 2)", for messages
};

struct Pattern {
  PatternKind kind = PatternKind::kGelu;
  std::string name;            // IR node name: the exporter's scope of the nodes + the function
  std::vector<int> nodes;      // the chain's node indices in graph order; the last computes the result
  std::string input;           // the tensor x the function is applied to
  std::vector<FixedConstant> fixed;
  // LayerNorm only: the two reductions, the epsilon operand, and gamma / beta (node -1 if absent).
  int mean = -1, variance = -1;
  Operand epsilon, gamma, beta;
};

struct PatternScan {
  std::vector<Pattern> patterns;
  // Node index -> why the chain around it is not one of the patterns; added to the node's error
  // if it cannot be lowered by itself.
  std::map<int, std::string> notes;
};

PatternScan find_patterns(const onnx::GraphProto& graph);

// Lowers `p` when the importer reaches its last node; every other node of the chain is held back
// until then. Returns how many of p.nodes (a prefix) it lowered: all, fewer when a trailing
// LayerNorm scale or offset is not a constant it can absorb (the importer lowers the rest one by
// one), or 0 when x is a constant (everything folds node by node). Throws, naming the node at
// fault, when the values are not the function's.
size_t lower_pattern(Importer& im, const onnx::GraphProto& graph, const Pattern& p);

}  // namespace nnd::onnx_import
