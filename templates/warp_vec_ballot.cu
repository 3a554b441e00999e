#pragma unroll
      for (int k = 0; k < WG_VEC / WG_SUB; k++) {
        /* Bit j: the lane's element k * WG_SUB + j is non-zero. */
        unsigned m = 0;
#pragma unroll
        for (int j = 0; j < WG_SUB; j++)
          if (WG_VALID(k * WG_SUB + j) && wg_load(x[u][k * WG_SUB + j]) != (wg_acc)0) m |= 1u << j;
        if (WG_LANES > 1) {
          /* One ballot per element slot j gives bit g for the group's lane g;
           * the group's word wants it at bit g * WG_VEC + j. */
          unsigned bits = 0;
#pragma unroll
          for (int j = 0; j < WG_VEC; j++) {
            const unsigned b = __ballot_sync(gmask, (m >> j) & 1u) >> (lane & ~(WG_LANES - 1u));
#pragma unroll
            for (int g = 0; g < WG_LANES; g++) bits |= ((b >> g) & 1u) << (g * WG_VEC + j);
          }
          m = bits;
        }
        if ((WG_LANES == 1 || glane == 0) && WG_VALID(k * WG_SUB))
          out[(e + k * WG_SUB) / WG_WIDTH] = m;
      }
