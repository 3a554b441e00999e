    const bool p = valid && wg_nonzero(in[i]);
    /* The warp-wide ballot, shifted so bit j is the group's lane j. */
    const unsigned bits = (__ballot_sync(gmask, p) >> (lane & ~(WG_WIDTH - 1u))) &
                          ${width_mask};
    if (glane == 0 && valid) out[i / WG_WIDTH] = bits;
