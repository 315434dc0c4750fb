//! The test bodies shared by the Threads and MPI test binaries. Each is `fn(&Communicator)`, runs
//! on every rank, and panics on failure. Sizes are chosen not to divide evenly by 2, 3 or 4.

#![allow(dead_code)]

pub mod comm;
pub mod util;

pub mod algebra;
pub mod api;
pub mod arith;
pub mod array;
pub mod building_blocks;
pub mod cg_cgls;
pub mod cg_variants;
pub mod check;
pub mod derivatives;
pub mod engine_operators;
pub mod engines;
pub mod errors;
pub mod fft;
pub mod fredholm;
pub mod ghost;
#[cfg(feature = "emulator")]
pub mod gpu_agree;
pub mod gpu_conv;
pub mod gpu_fft;
pub mod gpu_halo;
pub mod gpu_mdc;
pub mod gpu_prox;
pub mod gpu_stencil;
pub mod halo;
pub mod kirchhoff;
pub mod lsqr_ista;
pub mod mask;
pub mod matmul;
pub mod mdc;
pub mod nonstationary;
pub mod operators;
pub mod primitives;
pub mod props;
pub mod proximal;
pub mod redistribute;
pub mod reduce;
pub mod repro;
pub mod shared;
pub mod sliding;
pub mod stacked;

use distlops::core::Communicator;

/// Every test, in the order they run.
#[allow(clippy::type_complexity)]
pub const TESTS: &[(&str, fn(&Communicator))] = &[
    ("comm::all_reduce_sum_max_min", comm::all_reduce_sum_max_min),
    (
        "comm::all_gather_and_varcount",
        comm::all_gather_and_varcount,
    ),
    ("comm::gather_to_root", comm::gather_to_root),
    (
        "comm::broadcast_from_every_root",
        comm::broadcast_from_every_root,
    ),
    ("comm::ring_send_receive", comm::ring_send_receive),
    (
        "comm::exchange_with_both_neighbours",
        comm::exchange_with_both_neighbours,
    ),
    (
        "comm::exchange_overlapped_runs_work",
        comm::exchange_overlapped_runs_work,
    ),
    ("comm::all_to_all_varcount", comm::all_to_all_varcount),
    ("comm::split_by_colour", comm::split_by_colour),
    ("comm::barrier_and_agree", comm::barrier_and_agree),
    (
        "comm::large_random_all_reduce",
        comm::large_random_all_reduce,
    ),
    ("array::layout_balanced_split", array::layout_balanced_split),
    ("array::layout_with_counts", array::layout_with_counts),
    (
        "array::layout_from_local_shapes",
        array::layout_from_local_shapes,
    ),
    (
        "array::constructors_all_dtypes",
        array::constructors_all_dtypes,
    ),
    (
        "array::assign_broadcast_unsafe_scatter",
        array::assign_broadcast_unsafe_scatter,
    ),
    (
        "array::conj_copy_like_keep_layout_and_mask",
        array::conj_copy_like_keep_layout_and_mask,
    ),
    ("arith::arithmetic_f64", arith::arithmetic_f64),
    ("arith::arithmetic_complex64", arith::arithmetic_complex64),
    (
        "arith::arithmetic_single_precision",
        arith::arithmetic_single_precision,
    ),
    ("arith::arithmetic_keeps_mask", arith::arithmetic_keeps_mask),
    (
        "arith::real_times_complex_keeps_imaginary",
        arith::real_times_complex_keeps_imaginary,
    ),
    ("reduce::dot_vdot_f64", reduce::dot_vdot_f64),
    ("reduce::dot_vdot_complex", reduce::dot_vdot_complex),
    ("reduce::norms_f64", reduce::norms_f64),
    ("reduce::norms_complex", reduce::norms_complex),
    ("reduce::norm_axis_f64", reduce::norm_axis_f64),
    ("reduce::norm_axis_complex", reduce::norm_axis_complex),
    ("repro::plain_f64", repro::plain_f64),
    ("repro::plain_complex", repro::plain_complex),
    ("repro::stacked_f64", repro::stacked_f64),
    ("repro::stacked_complex", repro::stacked_complex),
    ("repro::vstack_hstack_f64", repro::vstack_hstack_f64),
    ("repro::vstack_hstack_complex", repro::vstack_hstack_complex),
    ("repro::stacked_vstack_f64", repro::stacked_vstack_f64),
    (
        "repro::stacked_vstack_complex",
        repro::stacked_vstack_complex,
    ),
    ("repro::cgls_f64", repro::cgls_f64),
    ("repro::cgls_complex", repro::cgls_complex),
    ("repro::norm_axis_f64", repro::norm_axis_f64),
    ("repro::norm_axis_complex", repro::norm_axis_complex),
    ("repro::five_thread_ranks", repro::five_thread_ranks),
    (
        "redistribute::redistribute_every_axis_pair",
        redistribute::redistribute_every_axis_pair,
    ),
    (
        "redistribute::redistribute_to_unbalanced_and_back",
        redistribute::redistribute_to_unbalanced_and_back,
    ),
    ("redistribute::ravel_any_axis", redistribute::ravel_any_axis),
    (
        "redistribute::redistribute_operator_all_dtypes[host]",
        redistribute::redistribute_operator_all_dtypes::<distlops::core::Host>,
    ),
    (
        "redistribute::redistribute_to_replicated_and_back[host]",
        redistribute::redistribute_to_replicated_and_back::<distlops::core::Host>,
    ),
    (
        "redistribute::reshape_shapes_and_axes",
        redistribute::reshape_shapes_and_axes,
    ),
    (
        "ghost::ghost_cells_all_widths",
        ghost::ghost_cells_all_widths,
    ),
    ("ghost::ghost_cells_multi_hop", ghost::ghost_cells_multi_hop),
    (
        "stacked::stacked_dot_vdot_norm",
        stacked::stacked_dot_vdot_norm,
    ),
    (
        "stacked::stacked_vector_trait",
        stacked::stacked_vector_trait,
    ),
    (
        "stacked::stacked_structure_mismatch",
        stacked::stacked_structure_mismatch,
    ),
    ("mask::masked_reductions_f64", mask::masked_reductions_f64),
    (
        "mask::masked_reductions_complex",
        mask::masked_reductions_complex,
    ),
    (
        "mask::different_masks_mismatch",
        mask::different_masks_mismatch,
    ),
    (
        "mask::masked_cgls_groups_stop_apart",
        mask::masked_cgls_groups_stop_apart,
    ),
    ("errors::mismatched_layouts", errors::mismatched_layouts),
    ("errors::invalid_local_shapes", errors::invalid_local_shapes),
    ("errors::axis_out_of_range", errors::axis_out_of_range),
    (
        "errors::wrong_local_block_on_one_rank",
        errors::wrong_local_block_on_one_rank,
    ),
    ("errors::invalid_masks", errors::invalid_masks),
    ("errors::size_edge_cases", errors::size_edge_cases),
    (
        "errors::unsupported_and_shape_errors",
        errors::unsupported_and_shape_errors,
    ),
    (
        "props::prop_to_dist_asarray_roundtrip",
        props::prop_to_dist_asarray_roundtrip,
    ),
    (
        "props::prop_redistribute_roundtrip",
        props::prop_redistribute_roundtrip,
    ),
    ("props::prop_ghost_cells", props::prop_ghost_cells),
    ("props::prop_ravel_reshape", props::prop_ravel_reshape),
    ("props::prop_dot_norm", props::prop_dot_norm),
    (
        "props::prop_failure_is_agreed",
        props::prop_failure_is_agreed,
    ),
    ("operators::block_diag_f64", operators::block_diag_f64),
    ("api::borrowed_inputs", api::borrowed_inputs),
    ("api::shapes", api::shapes),
    ("api::solver_errors_convert", api::solver_errors_convert),
    (
        "operators::block_diag_complex",
        operators::block_diag_complex,
    ),
    ("operators::stacks_f64", operators::stacks_f64),
    ("operators::stacks_complex", operators::stacks_complex),
    ("operators::stacked_f64", operators::stacked_f64),
    ("operators::stacked_complex", operators::stacked_complex),
    ("operators::object_safety", operators::object_safety),
    ("operators::operator_errors", operators::operator_errors),
    ("algebra::algebra_f64", algebra::algebra_f64),
    ("algebra::algebra_complex", algebra::algebra_complex),
    ("algebra::algebra_errors", algebra::algebra_errors),
    (
        "building_blocks::building_blocks_f64",
        building_blocks::building_blocks_f64,
    ),
    (
        "building_blocks::building_blocks_complex",
        building_blocks::building_blocks_complex,
    ),
    ("building_blocks::conj_block", building_blocks::conj_block),
    (
        "derivatives::first_derivative_f64",
        derivatives::first_derivative_f64,
    ),
    (
        "derivatives::first_derivative_complex",
        derivatives::first_derivative_complex,
    ),
    (
        "derivatives::second_derivative_f64",
        derivatives::second_derivative_f64,
    ),
    (
        "derivatives::second_derivative_complex",
        derivatives::second_derivative_complex,
    ),
    ("derivatives::laplacian_f64", derivatives::laplacian_f64),
    (
        "derivatives::laplacian_complex",
        derivatives::laplacian_complex,
    ),
    ("derivatives::gradient_f64", derivatives::gradient_f64),
    (
        "derivatives::gradient_complex",
        derivatives::gradient_complex,
    ),
    (
        "derivatives::same_values_on_every_split_f64",
        derivatives::same_values_on_every_split_f64,
    ),
    (
        "derivatives::same_values_on_every_split_complex",
        derivatives::same_values_on_every_split_complex,
    ),
    (
        "derivatives::thin_ranks_and_short_axes",
        derivatives::thin_ranks_and_short_axes,
    ),
    (
        "derivatives::derivative_errors",
        derivatives::derivative_errors,
    ),
    (
        "fft::fftnd_every_axis_set_f64",
        fft::fftnd_every_axis_set_f64,
    ),
    (
        "fft::fftnd_every_axis_set_complex64",
        fft::fftnd_every_axis_set_complex64,
    ),
    (
        "fft::fftnd_every_axis_set_f32",
        fft::fftnd_every_axis_set_f32,
    ),
    (
        "fft::fftnd_every_axis_set_complex32",
        fft::fftnd_every_axis_set_complex32,
    ),
    (
        "fft::fftnd_larger_against_rustfft",
        fft::fftnd_larger_against_rustfft,
    ),
    ("fft::fft_one_d_four_step", fft::fft_one_d_four_step),
    ("fft::fftnd_range_layouts", fft::fftnd_range_layouts),
    ("fft::fft_and_fft2d", fft::fft_and_fft2d),
    ("fft::fft_errors", fft::fft_errors),
    ("fft::fftnd_pencil_f64", fft::fftnd_pencil_f64),
    ("fft::fftnd_pencil_complex64", fft::fftnd_pencil_complex64),
    ("fft::fftnd_pencil_f32", fft::fftnd_pencil_f32),
    ("fft::fftnd_pencil_complex32", fft::fftnd_pencil_complex32),
    ("fft::fftnd_pencil_choice", fft::fftnd_pencil_choice),
    (
        "fredholm::fredholm1_all_dtypes",
        fredholm::fredholm1_all_dtypes,
    ),
    ("fredholm::fredholm1_errors", fredholm::fredholm1_errors),
    (
        "fredholm::fredholm1_errors_on_last_rank",
        fredholm::fredholm1_errors_on_last_rank,
    ),
    ("matmul::summa_f64_c64", matmul::summa_f64_c64),
    ("matmul::block_f64_c64", matmul::block_f64_c64),
    ("matmul::kinds_and_layouts", matmul::kinds_and_layouts),
    ("matmul::errors", matmul::errors),
    (
        "matmul::into_engine_moves",
        matmul::into_engine_moves::<distlops::core::Host>,
    ),
    ("mdc::mdc_all_dtypes", mdc::mdc_all_dtypes),
    ("mdc::mdc_errors", mdc::mdc_errors),
    ("mdc::mdc_errors_on_last_rank", mdc::mdc_errors_on_last_rank),
    ("cg_cgls::solvers_f64", cg_cgls::solvers_f64),
    ("cg_cgls::solvers_complex", cg_cgls::solvers_complex),
    ("lsqr_ista::lsqr_f64", lsqr_ista::lsqr_f64),
    ("lsqr_ista::lsqr_complex", lsqr_ista::lsqr_complex),
    ("lsqr_ista::ista_fista_f64", lsqr_ista::ista_fista_f64),
    (
        "lsqr_ista::ista_fista_complex",
        lsqr_ista::ista_fista_complex,
    ),
    ("lsqr_ista::errors", lsqr_ista::errors),
    ("lsqr_ista::repro_f64", lsqr_ista::repro_f64),
    ("lsqr_ista::repro_complex", lsqr_ista::repro_complex),
    ("proximal::l21_f64", proximal::l21_f64),
    ("proximal::l21_complex", proximal::l21_complex),
    ("proximal::moreau_f64", proximal::moreau_f64),
    ("proximal::moreau_complex", proximal::moreau_complex),
    ("proximal::l2data_f64", proximal::l2data_f64),
    ("proximal::l2data_complex", proximal::l2data_complex),
    ("proximal::primal_dual_f64", proximal::primal_dual_f64),
    (
        "proximal::primal_dual_complex",
        proximal::primal_dual_complex,
    ),
    ("proximal::repro_f64", proximal::repro_f64),
    ("proximal::repro_complex", proximal::repro_complex),
    ("proximal::errors", proximal::errors),
    (
        "proximal::proximal_gradient_f64",
        proximal::proximal_gradient_f64,
    ),
    (
        "proximal::proximal_gradient_complex",
        proximal::proximal_gradient_complex,
    ),
    (
        "proximal::proximal_gradient_errors",
        proximal::proximal_gradient_errors,
    ),
    ("proximal::admm_f64", proximal::admm_f64),
    ("proximal::admm_complex", proximal::admm_complex),
    ("proximal::separable_f64", proximal::separable_f64),
    ("proximal::separable_complex", proximal::separable_complex),
    ("proximal::weighted_l1_errors", proximal::weighted_l1_errors),
    ("proximal::simplex", proximal::simplex),
    ("proximal::separable_sum_f64", proximal::separable_sum_f64),
    (
        "proximal::separable_sum_complex",
        proximal::separable_sum_complex,
    ),
    (
        "proximal::separable_sum_errors",
        proximal::separable_sum_errors,
    ),
    ("proximal::composition_f64", proximal::composition_f64),
    (
        "proximal::composition_complex",
        proximal::composition_complex,
    ),
    (
        "proximal::linearized_admm_f64",
        proximal::linearized_admm_f64,
    ),
    (
        "proximal::linearized_admm_complex",
        proximal::linearized_admm_complex,
    ),
    (
        "cg_variants::stats_every_kind",
        cg_variants::stats_every_kind,
    ),
    ("cg_variants::counts_f64", cg_variants::counts_f64),
    ("cg_variants::counts_complex", cg_variants::counts_complex),
    ("cg_variants::convergence_f64", cg_variants::convergence_f64),
    (
        "cg_variants::convergence_complex",
        cg_variants::convergence_complex,
    ),
    (
        "cg_variants::ill_conditioned_f64",
        cg_variants::ill_conditioned_f64,
    ),
    (
        "cg_variants::ill_conditioned_complex",
        cg_variants::ill_conditioned_complex,
    ),
    ("cg_variants::repro_f64", cg_variants::repro_f64),
    ("cg_variants::repro_complex", cg_variants::repro_complex),
    ("halo::values_f64", halo::values_f64),
    ("halo::values_complex", halo::values_complex),
    ("halo::small_and_empty_blocks", halo::small_and_empty_blocks),
    ("halo::errors_on_every_rank", halo::errors_on_every_rank),
    ("halo::stencils_f64", halo::stencils_f64),
    ("halo::stencils_complex", halo::stencils_complex),
    ("nonstationary::values_f64", nonstationary::values_f64),
    (
        "nonstationary::values_complex",
        nonstationary::values_complex,
    ),
    ("nonstationary::values_single", nonstationary::values_single),
    (
        "kirchhoff::kirchhoff_all_dtypes[host]",
        kirchhoff::kirchhoff_all_dtypes::<distlops::core::Host>,
    ),
    ("kirchhoff::kirchhoff_errors", kirchhoff::kirchhoff_errors),
    (
        "kirchhoff::kirchhoff_split_constructor",
        kirchhoff::kirchhoff_split_constructor,
    ),
    (
        "kirchhoff::kirchhoff_image_split_all_dtypes[host]",
        kirchhoff::kirchhoff_image_split_all_dtypes::<distlops::core::Host>,
    ),
    (
        "kirchhoff::kirchhoff_image_split_errors",
        kirchhoff::kirchhoff_image_split_errors,
    ),
    (
        "nonstationary::default_layout",
        nonstationary::default_layout,
    ),
    (
        "nonstationary::errors_on_every_rank",
        nonstationary::errors_on_every_rank,
    ),
    (
        "nonstationary::engine_all_dtypes[host]",
        nonstationary::engine_all_dtypes::<distlops::core::Host>,
    ),
    ("sliding::values_f64", sliding::values_f64),
    ("sliding::values_complex", sliding::values_complex),
    ("sliding::values_single", sliding::values_single),
    ("sliding::tapers_and_unity", sliding::tapers_and_unity),
    (
        "sliding::errors_on_every_rank",
        sliding::errors_on_every_rank,
    ),
    (
        "sliding::engine_all_dtypes[host]",
        sliding::engine_all_dtypes::<distlops::core::Host>,
    ),
    (
        "engines::vector_ops_all_dtypes[host]",
        engines::vector_ops_all_dtypes::<distlops::core::Host>,
    ),
    (
        "engines::solvers_all_dtypes[host]",
        engines::solvers_all_dtypes::<distlops::core::Host>,
    ),
    (
        "primitives::primitives_all_dtypes[host]",
        primitives::primitives_all_dtypes::<distlops::core::Host>,
    ),
    (
        "engine_operators::operators_all_dtypes[host]",
        engine_operators::operators_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_conv::conv_all_dtypes[host]",
        gpu_conv::conv_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_prox::separable_all_dtypes[host]",
        gpu_prox::separable_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_stencil::first_derivative_all_dtypes[host]",
        gpu_stencil::first_derivative_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_stencil::second_derivative_all_dtypes[host]",
        gpu_stencil::second_derivative_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_stencil::laplacian_all_dtypes[host]",
        gpu_stencil::laplacian_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_stencil::gradient_all_dtypes[host]",
        gpu_stencil::gradient_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_stencil::thin_ranks_all_dtypes[host]",
        gpu_stencil::thin_ranks_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_halo::halo_all_dtypes[host]",
        gpu_halo::halo_all_dtypes::<distlops::core::Host>,
    ),
    (
        "engines::payload_collectives[host]",
        engines::payload_collectives_host,
    ),
    (
        "gpu_mdc::fredholm1_engine[host]",
        gpu_mdc::fredholm1_engine::<distlops::core::Host>,
    ),
    (
        "gpu_mdc::mdc_engine[host]",
        gpu_mdc::mdc_engine::<distlops::core::Host>,
    ),
    (
        "gpu_fft::fft_all_dtypes[host]",
        gpu_fft::fft_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_fft::fft_pencil_all_dtypes[host]",
        gpu_fft::fft_pencil_all_dtypes::<distlops::core::Host>,
    ),
    (
        "gpu_fft::fourier_moves_exact[host]",
        gpu_fft::fourier_moves_exact::<distlops::core::Host>,
    ),
    (
        "engines::node_rank_numbers_each_node",
        engines::node_rank_numbers_each_node,
    ),
    ("shared::contents_all_dtypes", shared::contents_all_dtypes),
    // Named `comm::` so that the MPI binary reruns it with small message chunks.
    ("comm::node_shared_between_nodes", shared::between_nodes),
    ("shared::one_copy_per_node", shared::one_copy_per_node),
    ("shared::free_and_drop", shared::free_and_drop),
    (
        "shared::matrix_mult_identical",
        shared::matrix_mult_identical,
    ),
    ("shared::errors_on_every_rank", shared::errors_on_every_rank),
];
