// The settings every optimizer takes besides its own, as Thinc's Optimizer applies them: L2 and clipping.
#pragma once

namespace psgrad {

struct SharedOptimizerSettings {
  double L2 = 0.0;
  double grad_clip = 1.0;  // each array's gradient clipped to this norm; 0 disables clipping
  bool L2_is_weight_decay = true;

  // L2 joins the gradient before clipping (Thinc's Optimizer.__call__), so its clip norm needs the weights.
  bool coupled_l2() const { return L2 != 0.0 && !L2_is_weight_decay; }
  // L2 shrinks the weights after the step instead.
  bool decays_weights() const { return L2 != 0.0 && L2_is_weight_decay; }
};

}  // namespace psgrad
