#pragma unroll
      for (int k = 0; k < WG_VEC / WG_SUB; k++) {
        /* Bit j: the lane's element k * WG_SUB + j is non-zero. */
        unsigned m = 0;
#pragma unroll
        for (int j = 0; j < WG_SUB; j++)
          if (WG_VALID(k * WG_SUB + j) && wg_nonzero(x[u][k * WG_SUB + j])) m |= 1u << j;
        if (WG_LANES > 1) {
          /* Here WG_SUB == WG_VEC (a group spans whole lanes). One ballot per
           * element slot j gives bit g for the group's lane g; the group's
           * word wants it at bit g * WG_VEC + j. So the WG_LANES bits of each
           * ballot are spread to stride WG_VEC, shifted by j and ORed: word
           * operations per slot, not one per bit. The constants are folded
           * from WG_VEC and WG_LANES by the compiler. */
          unsigned bits = 0;
#pragma unroll
          for (int j = 0; j < WG_VEC; j++) {
            unsigned s = (__ballot_sync(gmask, (m >> j) & 1u) >> (lane & ~(WG_LANES - 1u))) &
                         ((1u << WG_LANES) - 1u);
            if (WG_LANES < WG_VEC) {
              /* s * sum_i 2^(i*(V-1)) puts a copy of bit g at g + i*(V-1)
               * for every i < LANES; bit g's own copy (i = g) lands on
               * g * V. Two copies meet only where g - g' = (i' - i)(V-1),
               * impossible as |g - g'| < LANES <= V - 1: no two partial
               * products share a bit, so the sum has no carries and the mask
               * keeps exactly the wanted copies. */
              unsigned mul = 0, keep = 0;
#pragma unroll
              for (int g = 0; g < WG_LANES; g++) {
                mul |= 1u << (g * (WG_VEC - 1));
                keep |= 1u << (g * WG_VEC);
              }
              s = (s * mul) & keep;
            } else {
              /* Halving steps: before the step of block size h, bit g sits
               * at (g / 2h) * 2h * V + g % 2h; the upper half of each block
               * moves up by h * (V - 1), giving (g / h) * h * V + g % h. The
               * mask keeps those places only; after h = 1, bit g is at g * V. */
#pragma unroll
              for (int h = WG_LANES / 2; h >= 1; h /= 2) {
                unsigned keep = 0;
#pragma unroll
                for (int g = 0; g < WG_LANES; g++) keep |= 1u << (g / h * h * WG_VEC + g % h);
                s = (s | s << (h * (WG_VEC - 1))) & keep;
              }
            }
            bits |= s << j;
          }
          m = bits;
        }
        if ((WG_LANES == 1 || glane == 0) && WG_VALID(k * WG_SUB))
          out[(e + k * WG_SUB) / WG_WIDTH] = m;
      }
