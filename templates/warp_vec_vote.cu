      /* The predicate of each group the lane holds, folded in the thread;
       * past the end it is ${past_end}, which changes nothing. */
#pragma unroll
      for (int k = 0; k < WG_VEC / WG_SUB; k++) {
        bool q = ${past_end};
#pragma unroll
        for (int j = 0; j < WG_SUB; j++)
          q = q ${fold} (WG_VALID(k * WG_SUB + j) ? wg_nonzero(x[u][k * WG_SUB + j]) : ${past_end});
        if (WG_LANES > 1) q = ${vote}(gmask, q);
        if ((WG_LANES == 1 || glane == 0) && WG_VALID(k * WG_SUB))
          out[(e + k * WG_SUB) / WG_WIDTH] = q;
      }
