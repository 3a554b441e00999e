    const bool p = valid ? wg_nonzero(in[i]) : ${past_end};
    const int r = ${vote}(gmask, p);
    if (glane == 0 && valid) out[i / WG_WIDTH] = r;
