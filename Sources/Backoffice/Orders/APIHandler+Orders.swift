import BackofficeAPI
import BackofficePlatform
import Foundation

extension OrderDetail {
    /// The order as partners and the app see it: never the customer's id.
    var api: Components.Schemas.Order {
        get throws {
            var order = try self.order.api
            order.lines = try lines.map { line in
                .init(
                    line: line.line, goodId: line.goodID.text, sku: line.sku, name: line.name, quantity: line.quantity,
                    paidIn: try .init(known: line.paidIn.rawValue), unitPrice: line.unitPrice, total: line.total,
                    refundedQuantity: line.refundedQuantity)
            }
            order.refunds = try refunds.map { try $0.api }
            order.payment = try payment.map { payment in
                .init(
                    status: try .init(known: payment.status.rawValue), amountCents: payment.amountCents,
                    authorizedCents: payment.authorizedCents,
                    capturedCents: payment.capturedCents, refundedCents: payment.refundedCents,
                    failureCode: payment.failureCode)
            }
            return order
        }
    }
}

extension OrderRefund {
    var api: Components.Schemas.OrderRefund {
        get throws {
            Components.Schemas.OrderRefund(
                id: id.text, orderId: orderID.text, amountCents: amountCents, fitpoints: fitPoints, restock: restock,
                lines: lines.map { .init(line: $0.line, quantity: $0.quantity) }, reason: reason,
                status: try .init(known: status.rawValue), failureCode: failureCode, createdAt: createdAt,
                decidedAt: decidedAt)
        }
    }
}

extension Order {
    var api: Components.Schemas.Order {
        get throws {
            let address = shipping.address
            return Components.Schemas.Order(
                id: id.text, tenantId: tenantID.text, status: try .init(known: status.rawValue), totalCents: totalCents,
                totalFitpoints: totalFitPoints,
                shipping: .init(
                    erased: shipping.erased ? true : nil, name: shipping.name,
                    address: .init(
                        line1: address.line1, line2: address.line2, city: address.city, region: address.region,
                        postalCode: address.postalCode,
                        country: address.country)), carrier: carrier, trackingNumber: trackingNumber,
                statusReason: statusReason,
                lineCount: lineCount,
                createdAt: createdAt, updatedAt: updatedAt, version: version)
        }
    }
}

extension APIHandler {
    func checkout(_ input: Operations.Checkout.Input) async throws -> Operations.Checkout.Output {
        let body: Components.Schemas.CheckoutRequest = try json(input.body)
        let address = body.shipping.address
        let request = CheckoutRequest(
            customerID: try parseID(body.customerId, "customer_id"),
            lines: try body.lines.enumerated().map { index, line in
                .init(
                    goodID: try parseID(line.goodId, "lines[\(index)].good_id"), quantity: line.quantity,
                    payIn: try OrderLine.Currency(known: line.payIn.rawValue),
                    expectedUnitPrice: line.payIn == .usd
                        ? line.expectedUnitPriceCents : line.expectedUnitPriceFitpoints)
            },
            shipping: Order.Shipping(
                name: body.shipping.name,
                address: ShopAddress(
                    line1: address.line1, line2: address.line2, city: address.city, region: address.region,
                    postalCode: address.postalCode,
                    country: address.country)), paymentMethod: body.paymentMethod)
        let stored = try await changeStaged(
            Checkout(request, payments: payments, idempotencyKey: idempotencyKey), body: body
        ) { placed in
            StoredResponse(status: placed.declined == nil ? 201 : 402, body: try placed.detail.api)
        }
        let order = stored.body
        guard stored.status == 201 else {
            throw PaymentRefusal.declined(code: order.payment?.failureCode ?? "payment_failed")
        }
        return .created(.init(headers: .init(eTag: EntityTag.of(order.version)), body: .json(order)))
    }

    func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output {
        let query = input.query
        let filter = OrderFilter(
            placedFrom: query.placedFrom, placedTo: query.placedTo, sku: query.sku,
            customerID: try query.customerId.map { try parseID($0, "customer_id") },
            totalMinCents: query.totalMinCents, totalMaxCents: query.totalMaxCents)
        let request = OrderListRequest(
            limit: input.query.limit, cursor: input.query.cursor, status: input.query.status?.rawValue, filter: filter)
        let (items, next) = try await request.run(database, context: try context())
        return .ok(.init(body: .json(.init(items: try items.map { try $0.api }, nextCursor: next))))
    }

    func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        let order = try await read(GetOrder(id: try parseID(input.path.orderId, "order_id")))
        return .ok(.init(headers: .init(eTag: EntityTag.of(order.order.version)), body: .json(try order.api)))
    }

    /// Runs an order's move the provider has no part in (accept, deliver) and answers the order after it.
    private func advance(_ move: OrderMove, id: UUID) async throws -> Components.Responses.OrderMoved {
        let order = try await change(AdvanceOrder(orderID: id, move: move), on: id, body: String?.none) { try $0.api }
        return .init(headers: .init(eTag: EntityTag.of(order.version)), body: .json(order))
    }

    func acceptOrder(_ input: Operations.AcceptOrder.Input) async throws -> Operations.AcceptOrder.Output {
        .ok(try await advance(.accept, id: try parseID(input.path.orderId, "order_id")))
    }

    /// Runs a move the payment provider acts on first (staged) and answers the order after it; a
    /// refusal by the provider is 409 with the move's code, the order unchanged.
    private func stagedMove<Move: StagedOrderMove>(_ move: Move, id: UUID, body: some Codable & Sendable) async throws
        -> Components.Responses.OrderMoved
    {
        let stored = try await changeStaged(move, on: id, body: body) { outcome in
            StoredResponse(status: outcome.refused == nil ? 200 : 409, body: try outcome.detail.api)
        }
        guard stored.status == 200 else {
            throw Move.refusedByProvider
        }
        return .init(headers: .init(eTag: EntityTag.of(stored.body.version)), body: .json(stored.body))
    }

    func shipOrder(_ input: Operations.ShipOrder.Input) async throws -> Operations.ShipOrder.Output {
        let body: Components.Schemas.ShipmentRequest = try json(input.body)
        let id = try parseID(input.path.orderId, "order_id")
        let ship = ShipOrder(
            orderID: id, carrier: body.carrier, trackingNumber: body.trackingNumber, payments: payments)
        return .ok(try await stagedMove(ship, id: id, body: body))
    }

    func deliverOrder(_ input: Operations.DeliverOrder.Input) async throws -> Operations.DeliverOrder.Output {
        .ok(try await advance(.deliver, id: try parseID(input.path.orderId, "order_id")))
    }

    func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        let body: Components.Schemas.ReasonRequest = try json(input.body)
        let id = try parseID(input.path.orderId, "order_id")
        let cancel = CancelOrder(orderID: id, reason: body.reason, payments: payments)
        return .ok(try await stagedMove(cancel, id: id, body: body))
    }

    func refundOrder(_ input: Operations.RefundOrder.Input) async throws -> Operations.RefundOrder.Output {
        let body: Components.Schemas.ReasonRequest = try json(input.body)
        let id = try parseID(input.path.orderId, "order_id")
        let refund = RefundOrder(orderID: id, reason: body.reason, payments: payments)
        return .ok(try await stagedMove(refund, id: id, body: body))
    }

    /// A partial refund (`RefundOrderPart`); the provider's refusal is 409 `refund_refused`, the
    /// refund kept as failed.
    func refundOrderPart(_ input: Operations.RefundOrderPart.Input) async throws -> Operations.RefundOrderPart.Output {
        let body: Components.Schemas.OrderRefundRequest = try json(input.body)
        let id = try parseID(input.path.orderId, "order_id")
        let request = OrderRefundRequest(
            lines: body.lines?.map { OrderRefund.Line(line: $0.line, quantity: $0.quantity) },
            amountCents: body.amountCents, restock: body.restock ?? false, reason: body.reason)
        // A repeat takes the path its key took (a refund made since would hold the same request now).
        let path = try await onItsKeysPath {
            () -> HeldOrDone<StoredResponse<Components.Schemas.OrderRefund>, Components.Schemas.ApprovalRequest> in
            let recorded = try await recordedStatus(on: id, body: body)
            let held =
                recorded == nil
                ? try await read(OrderRefundQuote(orderID: id, request: request))
                : HeldOrderRefund(orderID: id, request: request, cashCents: 0, refundedBefore: 0)
            if takesHeldPath(recorded: recorded, held) {
                return .held(try await hold(held, on: id, body: body))
            }
            return .done(
                try await changeStaged(
                    RefundOrderPart(orderID: id, request: request, payments: payments), on: id, body: body
                ) { refund in
                    StoredResponse(status: refund.status == .failed ? 409 : 201, body: try refund.api)
                })
        }
        switch path {
        case .held(let approval): return .accepted(.init(body: .json(approval)))
        case .done(let stored) where stored.status == 201: return .created(.init(body: .json(stored.body)))
        case .done(let stored): throw OrderRefund.refusedByProvider(stored.body.failureCode)
        }
    }
}
